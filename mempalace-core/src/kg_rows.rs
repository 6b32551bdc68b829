//! The knowledge graph's rows as stored (3.11's `entities` and `triples` columns), for moving
//! a graph whole between backends and releases: read a page at a time by id, written back
//! verbatim where the id is absent.

use serde::{Deserialize, Serialize};

use crate::{PalaceError, Result};

/// One `entities` row, every column as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityRow {
    /// `entity_id` of the name.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Kind ("person", "project", ..., "unknown").
    #[serde(rename = "type", default)]
    pub entity_type: Option<String>,
    /// JSON object text of the properties.
    #[serde(default)]
    pub properties: Option<String>,
    /// When the row was written (the store's own text).
    #[serde(default)]
    pub created_at: Option<String>,
}

/// One `triples` row, every column as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TripleRow {
    /// Triple id.
    pub id: String,
    /// Subject entity id.
    pub subject: String,
    /// Predicate id.
    pub predicate: String,
    /// Object entity id.
    pub object: String,
    /// Start of validity.
    #[serde(default)]
    pub valid_from: Option<String>,
    /// End of validity (`None`: current).
    #[serde(default)]
    pub valid_to: Option<String>,
    /// Confidence in [0, 1].
    #[serde(default)]
    pub confidence: Option<f64>,
    /// The drawer (or closet) id the fact came from.
    #[serde(default)]
    pub source_closet: Option<String>,
    /// The file the fact came from.
    #[serde(default)]
    pub source_file: Option<String>,
    /// The drawer id the fact was extracted from.
    #[serde(default)]
    pub source_drawer_id: Option<String>,
    /// The adapter that extracted it.
    #[serde(default)]
    pub adapter_name: Option<String>,
    /// When the row was written (the store's own text).
    #[serde(default)]
    pub extracted_at: Option<String>,
}

/// How many rows an import added (rows whose id was already stored are left as they are).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowsImported {
    /// New entity rows.
    pub entities: u64,
    /// New triple rows.
    pub triples: u64,
}

/// Checks one id-like column: not blank, no control characters, at most 1,024 characters.
fn check_key(field: &'static str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(PalaceError::invalid(field, "must not be empty"));
    }
    if value.chars().any(char::is_control) {
        return Err(PalaceError::invalid(
            field,
            format!("{value:?} contains control characters"),
        ));
    }
    if value.chars().count() > 1024 {
        return Err(PalaceError::invalid(field, "longer than 1024 characters"));
    }
    Ok(())
}

impl EntityRow {
    /// Checks the row can be stored: a usable id and name, properties a JSON object.
    pub fn validate(&self) -> Result<()> {
        check_key("entity id", &self.id)?;
        check_key("entity name", &self.name)?;
        if let Some(props) = &self.properties {
            let parsed: serde_json::Value = serde_json::from_str(props)
                .map_err(|e| PalaceError::invalid("properties", format!("not JSON text: {e}")))?;
            if !parsed.is_object() {
                return Err(PalaceError::invalid("properties", "must be a JSON object"));
            }
        }
        Ok(())
    }
}

impl TripleRow {
    /// Checks the row can be stored: usable ids, a confidence in [0, 1], an interval that
    /// does not end before it starts.
    pub fn validate(&self) -> Result<()> {
        check_key("triple id", &self.id)?;
        check_key("subject", &self.subject)?;
        check_key("predicate", &self.predicate)?;
        check_key("object", &self.object)?;
        if let Some(c) = self.confidence
            && !(0.0..=1.0).contains(&c)
        {
            return Err(PalaceError::invalid(
                "confidence",
                format!("{c} is outside [0, 1]"),
            ));
        }
        for (field, value) in [
            ("valid_from", &self.valid_from),
            ("valid_to", &self.valid_to),
        ] {
            if let Some(v) = value
                && (v.chars().any(char::is_control) || v.chars().count() > 64)
            {
                return Err(PalaceError::invalid(field, format!("{v:?} is not a date")));
            }
        }
        if let (Some(from), Some(to)) = (&self.valid_from, &self.valid_to)
            && crate::temporal::ends_before_start(from, to)
        {
            return Err(PalaceError::invalid(
                "valid_to",
                format!("triple {} ends ({to}) before it starts ({from})", self.id),
            ));
        }
        Ok(())
    }
}

/// Checks a batch before any of it is written: every row valid, and every triple's subject
/// and object among `entities` or already stored (`stored` answers for the ids not in the
/// batch).
pub fn validate_batch(
    entities: &[EntityRow],
    triples: &[TripleRow],
    mut stored: impl FnMut(&str) -> bool,
) -> Result<()> {
    for e in entities {
        e.validate()?;
    }
    let in_batch: std::collections::HashSet<&str> =
        entities.iter().map(|e| e.id.as_str()).collect();
    for t in triples {
        t.validate()?;
        for (field, id) in [("subject", &t.subject), ("object", &t.object)] {
            if !in_batch.contains(id.as_str()) && !stored(id) {
                return Err(PalaceError::invalid(
                    field,
                    format!("triple {} names the unknown entity {id:?}", t.id),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(id: &str) -> EntityRow {
        EntityRow {
            id: id.into(),
            name: id.into(),
            entity_type: Some("person".into()),
            properties: Some("{}".into()),
            created_at: None,
        }
    }

    fn triple(id: &str, s: &str, o: &str) -> TripleRow {
        TripleRow {
            id: id.into(),
            subject: s.into(),
            predicate: "knows".into(),
            object: o.into(),
            valid_from: None,
            valid_to: None,
            confidence: Some(1.0),
            source_closet: None,
            source_file: None,
            source_drawer_id: None,
            adapter_name: None,
            extracted_at: None,
        }
    }

    #[test]
    fn rows_are_checked_before_anything_is_written() {
        assert!(
            validate_batch(
                &[entity("a"), entity("b")],
                &[triple("t", "a", "b")],
                |_| false
            )
            .is_ok()
        );
        assert!(validate_batch(&[entity("a")], &[triple("t", "a", "b")], |_| false).is_err());
        assert!(validate_batch(&[entity("a")], &[triple("t", "a", "b")], |id| id == "b").is_ok());
        let mut bad = entity("a");
        bad.properties = Some("[1]".into());
        assert!(validate_batch(&[bad], &[], |_| false).is_err());
        let mut blank = entity(" ");
        blank.name = "x".into();
        assert!(validate_batch(&[blank], &[], |_| false).is_err());
        let mut unsure = triple("t", "a", "a");
        unsure.confidence = Some(1.5);
        assert!(validate_batch(&[entity("a")], &[unsure], |_| false).is_err());
    }
}
