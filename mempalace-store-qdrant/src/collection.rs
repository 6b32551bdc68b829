//! Checking an existing collection before reusing it: dense unnamed vectors of the palace's
//! dimension under cosine distance, and keyword indexes on the filtered fields.

use mempalace_core::{PalaceError, Result};
use qdrant_client::qdrant::vectors_config::Config;
use qdrant_client::qdrant::{CollectionInfo, Distance, PayloadSchemaType};

use crate::payload::INDEXED_FIELDS;

/// What reusing an existing, compatible collection still needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectionCheck {
    /// Indexed fields that have no payload index yet (they get a keyword index).
    pub missing_indexes: Vec<&'static str>,
    /// Indexed fields whose index is not a keyword index (logged; filters may be slower).
    pub non_keyword_indexes: Vec<&'static str>,
}

/// The name of a distance enum value as Qdrant spells it.
pub fn distance_name(distance: i32) -> &'static str {
    Distance::try_from(distance).map_or("unknown", |d| d.as_str_name())
}

/// Checks `info` of collection `name` for a store of `dimension`: another dimension is a
/// [`PalaceError::DimensionMismatch`] naming both, another distance or named vectors an
/// [`PalaceError::InvalidInput`]; a compatible collection yields the index work left to do.
pub fn check_collection(
    info: &CollectionInfo,
    name: &str,
    dimension: usize,
) -> Result<CollectionCheck> {
    let vectors = info
        .config
        .as_ref()
        .and_then(|c| c.params.as_ref())
        .and_then(|p| p.vectors_config.as_ref())
        .and_then(|v| v.config.as_ref());
    let params = match vectors {
        Some(Config::Params(params)) => params,
        Some(Config::ParamsMap(map)) => {
            let mut names: Vec<&str> = map.map.keys().map(String::as_str).collect();
            names.sort_unstable();
            return Err(PalaceError::invalid(
                "collection",
                format!(
                    "Qdrant collection {name:?} uses named vectors ({}); MemPalace needs one unnamed cosine vector",
                    names.join(", ")
                ),
            ));
        }
        None => {
            return Err(PalaceError::invalid(
                "collection",
                format!("Qdrant collection {name:?} reports no dense vector configuration"),
            ));
        }
    };
    let existing = usize::try_from(params.size).unwrap_or(usize::MAX);
    if existing != dimension {
        return Err(PalaceError::DimensionMismatch {
            expected: existing,
            actual: dimension,
            context: format!(
                "Qdrant collection {name:?} holds {existing}-dimensional vectors but this palace's embedder \
                 produces {dimension}; use another collection or the matching embedder"
            ),
        });
    }
    if params.distance != Distance::Cosine as i32 {
        return Err(PalaceError::invalid(
            "collection",
            format!(
                "Qdrant collection {name:?} uses {} distance; MemPalace needs Cosine (create a new collection)",
                distance_name(params.distance)
            ),
        ));
    }
    let mut check = CollectionCheck::default();
    for field in INDEXED_FIELDS {
        match info.payload_schema.get(field) {
            None => check.missing_indexes.push(field),
            Some(schema) if schema.data_type != PayloadSchemaType::Keyword as i32 => {
                check.non_keyword_indexes.push(field);
            }
            Some(_) => {}
        }
    }
    Ok(check)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use qdrant_client::qdrant::{
        CollectionConfig, CollectionParams, PayloadSchemaInfo, VectorParams, VectorParamsMap,
        VectorsConfig,
    };

    use super::*;

    fn info(config: Option<Config>, indexed: &[(&str, PayloadSchemaType)]) -> CollectionInfo {
        CollectionInfo {
            config: Some(CollectionConfig {
                params: Some(CollectionParams {
                    vectors_config: Some(VectorsConfig { config }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            payload_schema: indexed
                .iter()
                .map(|(f, t)| {
                    (
                        f.to_string(),
                        PayloadSchemaInfo {
                            data_type: *t as i32,
                            ..Default::default()
                        },
                    )
                })
                .collect(),
            ..Default::default()
        }
    }

    fn params(size: u64, distance: Distance) -> Option<Config> {
        Some(Config::Params(VectorParams {
            size,
            distance: distance as i32,
            ..Default::default()
        }))
    }

    #[test]
    fn matching_collection_reports_missing_indexes() {
        let all: Vec<_> = INDEXED_FIELDS
            .iter()
            .map(|f| (*f, PayloadSchemaType::Keyword))
            .collect();
        let check = check_collection(&info(params(384, Distance::Cosine), &all), "c", 384).unwrap();
        assert_eq!(check, CollectionCheck::default());
        let check = check_collection(
            &info(
                params(384, Distance::Cosine),
                &[
                    ("wing", PayloadSchemaType::Keyword),
                    ("room", PayloadSchemaType::Text),
                ],
            ),
            "c",
            384,
        )
        .unwrap();
        assert_eq!(check.missing_indexes, vec!["source_file", "drawer_id"]);
        assert_eq!(check.non_keyword_indexes, vec!["room"]);
    }

    #[test]
    fn other_dimension_is_a_mismatch_naming_both() {
        match check_collection(&info(params(768, Distance::Cosine), &[]), "palace", 384) {
            Err(PalaceError::DimensionMismatch {
                expected,
                actual,
                context,
            }) => {
                assert_eq!((expected, actual), (768, 384));
                assert!(
                    context.contains("palace")
                        && context.contains("768")
                        && context.contains("384"),
                    "{context}"
                );
            }
            other => panic!("expected DimensionMismatch, got {other:?}"),
        }
    }

    #[test]
    fn other_distance_or_named_vectors_are_invalid_input() {
        for d in [Distance::Dot, Distance::Euclid, Distance::Manhattan] {
            match check_collection(&info(params(384, d), &[]), "c", 384) {
                Err(PalaceError::InvalidInput { field, reason }) => {
                    assert_eq!(field, "collection");
                    assert!(reason.contains(d.as_str_name()), "{reason}");
                }
                other => panic!("expected InvalidInput, got {other:?}"),
            }
        }
        let named = Some(Config::ParamsMap(VectorParamsMap {
            map: HashMap::from([("text".to_string(), VectorParams::default())]),
        }));
        assert!(matches!(
            check_collection(&info(named, &[]), "c", 384),
            Err(PalaceError::InvalidInput { .. })
        ));
        assert!(matches!(
            check_collection(&info(None, &[]), "c", 384),
            Err(PalaceError::InvalidInput { .. })
        ));
        assert!(matches!(
            check_collection(&CollectionInfo::default(), "c", 384),
            Err(PalaceError::InvalidInput { .. })
        ));
    }

    #[test]
    fn distance_names() {
        assert_eq!(distance_name(Distance::Cosine as i32), "Cosine");
        assert_eq!(distance_name(99), "unknown");
    }
}
