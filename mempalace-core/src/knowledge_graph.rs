//! The `KnowledgeGraph` trait: entities and triples with time validity.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{PalaceError, Result};
use crate::kg_rows::{EntityRow, RowsImported, TripleRow};
use crate::temporal::{canonical_date, ends_before_start, supersede_boundary, today};
use crate::vector_store::Page;

/// Which facts of an entity to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Facts where the entity is the subject.
    Outgoing,
    /// Facts where the entity is the object.
    Incoming,
    /// Both.
    #[default]
    Both,
}

impl FromStr for Direction {
    type Err = PalaceError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "outgoing" => Ok(Direction::Outgoing),
            "incoming" => Ok(Direction::Incoming),
            "both" => Ok(Direction::Both),
            other => Err(PalaceError::invalid(
                "direction",
                format!("{other:?} is not one of outgoing, incoming, both"),
            )),
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Outgoing => "outgoing",
            Direction::Incoming => "incoming",
            Direction::Both => "both",
        })
    }
}

/// The entity id MemPalace 3.11 derives from a name: lower case, spaces to underscores,
/// apostrophes dropped, everything else kept ("My Project" → "my_project", "O'Brien" →
/// "obrien", "GPT-4" → "gpt-4").
pub fn entity_id(name: &str) -> String {
    name.trim()
        .to_lowercase()
        .replace(' ', "_")
        .replace('\'', "")
}

/// The stored form of a predicate: lower case, spaces to underscores ("Works At" → "works_at").
pub fn predicate_id(predicate: &str) -> String {
    predicate.trim().to_lowercase().replace(' ', "_")
}

/// MemPalace 3.11's id for a new triple: `t_{subject}_{predicate}_{object}_{hash12}`, where
/// hash12 is the first 12 hex digits of SHA-256 over `{len}:{valid_from}{len}:{recorded_at}`
/// (valid_from `None` when absent, recorded_at now, local time with microseconds). Ids written
/// by earlier releases (8 hex digits of MD5) are read like any other.
pub fn triple_id(
    subject_id: &str,
    predicate_id: &str,
    object_id: &str,
    valid_from: Option<&str>,
) -> String {
    use sha2::{Digest, Sha256};
    let valid_from = valid_from.unwrap_or("None");
    let recorded_at = crate::temporal::now_iso();
    let key = format!(
        "{}:{valid_from}{}:{recorded_at}",
        valid_from.chars().count(),
        recorded_at.chars().count()
    );
    let digest = hex::encode(Sha256::digest(key.as_bytes()));
    format!(
        "t_{subject_id}_{predicate_id}_{object_id}_{}",
        &digest[..12]
    )
}

/// Checks an entity name or predicate is usable.
fn validate_term(field: &'static str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(PalaceError::invalid(field, "must not be empty"));
    }
    if value.chars().any(char::is_control) {
        return Err(PalaceError::invalid(
            field,
            format!("{value:?} contains control characters"),
        ));
    }
    if value.chars().count() > 512 {
        return Err(PalaceError::invalid(field, "longer than 512 characters"));
    }
    Ok(())
}

/// An entity to add (or update) in the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewEntity {
    /// Display name; the id is [`entity_id`] of it.
    pub name: String,
    /// Kind of entity ("person", "project", ...); "unknown" when not given.
    pub entity_type: String,
    /// Free-form properties (a JSON object).
    pub properties: serde_json::Value,
}

impl NewEntity {
    /// An entity of unknown type with no properties.
    pub fn new(name: impl Into<String>) -> Self {
        NewEntity {
            name: name.into(),
            entity_type: "unknown".into(),
            properties: serde_json::json!({}),
        }
    }

    /// Checks the name and that properties is a JSON object.
    pub fn validate(&self) -> Result<()> {
        validate_term("name", &self.name)?;
        validate_term("entity_type", &self.entity_type)?;
        if !self.properties.is_object() {
            return Err(PalaceError::invalid("properties", "must be a JSON object"));
        }
        Ok(())
    }
}

/// A triple to add: subject → predicate → object, valid over an optional interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTriple {
    /// Subject entity name (created if missing).
    pub subject: String,
    /// Relationship, e.g. "uses"; stored as [`predicate_id`].
    pub predicate: String,
    /// Object entity name (created if missing).
    pub object: String,
    /// Start of validity (inclusive): a date or UTC timestamp, as [`canonical_date`] accepts.
    pub valid_from: Option<String>,
    /// End of validity (exclusive; a date includes its whole day); `None`: current.
    pub valid_to: Option<String>,
    /// Confidence in [0, 1]; 1.0 by default.
    pub confidence: f64,
    /// The drawer (or closet) id this fact came from (links the graph back to the vector
    /// store).
    pub source_closet: Option<String>,
    /// The file this fact came from.
    pub source_file: Option<String>,
    /// The drawer id this fact was extracted from (3.11's provenance column).
    pub source_drawer_id: Option<String>,
}

impl NewTriple {
    /// A current fact with confidence 1.0 and no source.
    pub fn new(
        subject: impl Into<String>,
        predicate: impl Into<String>,
        object: impl Into<String>,
    ) -> Self {
        NewTriple {
            subject: subject.into(),
            predicate: predicate.into(),
            object: object.into(),
            valid_from: None,
            valid_to: None,
            confidence: 1.0,
            source_closet: None,
            source_file: None,
            source_drawer_id: None,
        }
    }

    /// Sets the start of validity.
    pub fn valid_from(mut self, date: impl Into<String>) -> Self {
        self.valid_from = Some(date.into());
        self
    }

    /// Sets the end of validity.
    pub fn valid_to(mut self, date: impl Into<String>) -> Self {
        self.valid_to = Some(date.into());
        self
    }

    /// Sets the source drawer id.
    pub fn source_closet(mut self, drawer_id: impl Into<String>) -> Self {
        self.source_closet = Some(drawer_id.into());
        self
    }

    /// Checks every field and returns the triple in stored form: trimmed names, predicate as
    /// [`predicate_id`], canonical dates. Errors on empty names, confidence outside [0, 1],
    /// unparseable dates and `valid_to` before `valid_from`.
    pub fn validated(&self) -> Result<NewTriple> {
        validate_term("subject", &self.subject)?;
        validate_term("predicate", &self.predicate)?;
        validate_term("object", &self.object)?;
        if !(0.0..=1.0).contains(&self.confidence) {
            return Err(PalaceError::invalid(
                "confidence",
                format!("{} is outside [0, 1]", self.confidence),
            ));
        }
        let valid_from = self
            .valid_from
            .as_deref()
            .map(|d| canonical_date("valid_from", d))
            .transpose()?;
        let valid_to = self
            .valid_to
            .as_deref()
            .map(|d| canonical_date("valid_to", d))
            .transpose()?;
        if let (Some(from), Some(to)) = (&valid_from, &valid_to)
            && ends_before_start(from, to)
        {
            return Err(PalaceError::invalid(
                "valid_to",
                format!("{to} is before valid_from {from}"),
            ));
        }
        let blank_to_none = |v: &Option<String>| {
            v.as_ref()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        Ok(NewTriple {
            subject: self.subject.trim().to_string(),
            predicate: predicate_id(&self.predicate),
            object: self.object.trim().to_string(),
            valid_from,
            valid_to,
            confidence: self.confidence,
            source_closet: blank_to_none(&self.source_closet),
            source_file: blank_to_none(&self.source_file),
            source_drawer_id: blank_to_none(&self.source_drawer_id),
        })
    }
}

/// A change of a single-valued fact: `subject predicate old_object` ends and
/// `subject predicate new_object` starts at `at`, with no instant seeing both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Supersede {
    /// Subject entity name.
    pub subject: String,
    /// Relationship.
    pub predicate: String,
    /// The value that stops being true.
    pub old_object: String,
    /// The value that becomes true.
    pub new_object: String,
    /// When the change happens: the old fact's valid_to and the new fact's valid_from, one
    /// shared instant (a date means its first second); `None` is now, in UTC.
    pub at: Option<String>,
    /// Confidence of the new fact.
    pub confidence: f64,
    /// The drawer the change was learnt from.
    pub source_closet: Option<String>,
}

impl Supersede {
    /// Checks the change and returns it in stored form, as every backend applies it: the
    /// shared instant ([`supersede_boundary`]), the new fact opening then (validated), and
    /// the old fact's stored subject, predicate and object ids.
    pub fn validated(&self) -> Result<ValidatedSupersede> {
        let at = supersede_boundary(self.at.as_deref())?;
        let mut new = NewTriple::new(&self.subject, &self.predicate, &self.new_object);
        new.valid_from = Some(at.clone());
        new.confidence = self.confidence;
        new.source_closet = self.source_closet.clone();
        let new = new.validated()?;
        NewTriple::new(&self.subject, &self.predicate, &self.old_object).validated()?;
        Ok(ValidatedSupersede {
            closes: [
                entity_id(&self.subject),
                new.predicate.clone(),
                entity_id(&self.old_object),
            ],
            at,
            new,
        })
    }
}

/// A checked [`Supersede`], ready for a backend to apply in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidatedSupersede {
    /// The instant the old fact closes and the new one opens.
    pub at: String,
    /// The new fact (valid from `at`), in stored form.
    pub new: NewTriple,
    /// The old fact's subject id, predicate id and object id.
    pub closes: [String; 3],
}

/// Names shorter than this get no entity candidates (3.11's `_MIN_ENTITY_CANDIDATE_LEN`).
pub const MIN_CANDIDATE_CHARS: usize = 3;

/// 3.11's entity-candidate rule as SQL `LIKE … ESCAPE '\'` patterns, for a name (trimmed)
/// and its id: the name as a whole space-separated part of another name (`n %`, `% n`,
/// `% n %`), then the id as a whole `_`-separated part of another id (`i\_%`, `%\_i`,
/// `%\_i\_%`); `%`, `_` and `\` in either are escaped. `None` for a name too short to have
/// candidates ([`MIN_CANDIDATE_CHARS`]).
pub fn candidate_like_patterns(name: &str, id: &str) -> Option<[String; 6]> {
    if name.chars().count() < MIN_CANDIDATE_CHARS {
        return None;
    }
    let escape = |v: &str| {
        v.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    };
    let (n, i) = (escape(name), escape(id));
    Some([
        format!("{n} %"),
        format!("% {n}"),
        format!("% {n} %"),
        format!("{i}\\_%"),
        format!("%\\_{i}"),
        format!("%\\_{i}\\_%"),
    ])
}

/// The stored form of an `invalidate` call: the fact's subject id, predicate id and object id,
/// and the canonical end (`ended`, else today).
pub fn invalidation(
    subject: &str,
    predicate: &str,
    object: &str,
    ended: Option<&str>,
) -> Result<([String; 3], String)> {
    let ended = match ended {
        Some(d) => canonical_date("ended", d)?,
        None => today(),
    };
    Ok((
        [
            entity_id(subject),
            predicate_id(predicate),
            entity_id(object),
        ],
        ended,
    ))
}

/// What a supersede did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Supersession {
    /// The id of the new, current triple.
    pub new_triple_id: String,
    /// The valid_to given to the old fact.
    pub old_valid_to: String,
    /// The valid_from of the new fact.
    pub new_valid_from: String,
}

/// One fact as returned by queries and timelines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// "outgoing" or "incoming" relative to the queried entity (absent for other queries).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub direction: Option<Direction>,
    /// Subject display name.
    pub subject: String,
    /// Relationship.
    pub predicate: String,
    /// Object display name.
    pub object: String,
    /// Start of validity, if known.
    pub valid_from: Option<String>,
    /// End of validity; `None` while current.
    pub valid_to: Option<String>,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// The drawer id the fact came from.
    pub source_closet: Option<String>,
    /// True while `valid_to` is null.
    pub current: bool,
}

/// Size and shape of the graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KgStats {
    /// Number of entities.
    pub entities: u64,
    /// Number of triples.
    pub triples: u64,
    /// Triples with no valid_to.
    pub current_facts: u64,
    /// Triples whose validity has been closed.
    pub expired_facts: u64,
    /// Distinct predicates, sorted.
    pub relationship_types: Vec<String>,
    /// Triple count per predicate.
    pub predicates: BTreeMap<String, u64>,
    /// Open-fact (no `valid_to`) count per predicate (`audit`'s predicate reuse; not part of
    /// the `kg_stats` payload).
    #[serde(skip)]
    pub current_predicates: BTreeMap<String, u64>,
}

/// A temporal knowledge graph. Backends validate input with [`NewTriple::validated`] and the
/// functions of [`crate::temporal`], so every backend applies the same rules; an unknown entity
/// yields an empty result, never an error.
#[async_trait]
pub trait KnowledgeGraph: Send + Sync {
    /// Whether the graph's storage exists already.
    async fn exists(&self) -> Result<bool>;

    /// Creates the storage if missing (idempotent).
    async fn create_if_missing(&self) -> Result<()>;

    /// Adds an entity or updates its display name, type and properties; returns its id.
    async fn add_entity(&self, entity: &NewEntity) -> Result<String>;

    /// Adds a triple (creating missing entities) and returns its id; while the same triple is
    /// current (open), adding it again with any interval returns the current one's id.
    async fn add_triple(&self, triple: &NewTriple) -> Result<String>;

    /// Closes the open fact `subject predicate object` at `ended` (default: today); returns how
    /// many facts were closed. Never deletes.
    async fn invalidate(
        &self,
        subject: &str,
        predicate: &str,
        object: &str,
        ended: Option<&str>,
    ) -> Result<u64>;

    /// Closes the old value and opens the new one in one transaction, at one shared instant
    /// (3.11's `supersede`): with no current old value it is an add; with the new value already
    /// current it returns that fact's id.
    async fn supersede(&self, change: &Supersede) -> Result<Supersession>;

    /// Facts about an entity, optionally only those valid at `as_of`; the entity's side of each
    /// fact carries the name asked for. An unknown name with exactly one
    /// [`KnowledgeGraph::entity_candidates`] answers for that candidate.
    async fn query_entity(
        &self,
        name: &str,
        as_of: Option<&str>,
        direction: Direction,
    ) -> Result<Vec<Fact>>;

    /// Facts with a given predicate, optionally only those valid at `as_of`.
    async fn query_relationship(&self, predicate: &str, as_of: Option<&str>) -> Result<Vec<Fact>>;

    /// Facts (of one entity, or all) in order of valid_from, oldest first, undated last.
    async fn timeline(&self, entity: Option<&str>, page: Page) -> Result<Vec<Fact>>;

    /// How many facts the whole timeline (of one entity, or all) holds, over every page.
    async fn timeline_total(&self, entity: Option<&str>) -> Result<u64>;

    /// Counts and predicate histogram.
    async fn stats(&self) -> Result<KgStats>;

    /// Other entities `name` may mean (3.11's disambiguation): at most 5 whose name holds it
    /// as a whole word or whose id holds its id as a whole `_` part; none for names under 3
    /// characters. [`KnowledgeGraph::query_entity`] answers for the only candidate when the
    /// name itself is unknown.
    async fn entity_candidates(&self, name: &str) -> Result<Vec<EntityCandidate>>;

    /// Writes a consistent copy of the graph as it is now into the palace folder `palace_dir`
    /// (`backup`); `false` when it does not exist yet. The default refuses
    /// ([`PalaceError::no_snapshot`]).
    async fn snapshot_into(&self, palace_dir: &std::path::Path) -> Result<bool> {
        let _ = palace_dir;
        Err(PalaceError::no_snapshot("knowledge graph"))
    }

    /// What is wrong with the stored graph (`verify`): the engine's own integrity check, and
    /// facts naming entities that are not stored. Empty when sound or not created yet.
    async fn integrity_problems(&self) -> Result<Vec<String>>;

    /// Entity rows as stored, by id (byte order), those after `after_id` only, at most `limit`
    /// (export: a whole graph a page at a time). Empty when the graph does not exist.
    async fn entity_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<EntityRow>>;

    /// Triple rows as stored, by id (byte order), those after `after_id` only, at most `limit`.
    async fn triple_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<TripleRow>>;

    /// Stores rows verbatim in one transaction (import), each only where its id is absent, so
    /// importing twice changes nothing. The batch is checked first
    /// ([`crate::kg_rows::validate_batch`]): one bad row stores none of it.
    async fn import_rows(
        &self,
        entities: &[EntityRow],
        triples: &[TripleRow],
    ) -> Result<RowsImported>;
}

/// An entity a name may refer to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityCandidate {
    /// The entity's id.
    pub id: String,
    /// Its display name.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_normalised() {
        assert_eq!(entity_id("Clerk"), "clerk");
        assert_eq!(entity_id("My Project"), "my_project");
        assert_eq!(entity_id("auth-0 Service"), "auth-0_service");
        assert_eq!(
            entity_id("GPT-4"),
            "gpt-4",
            "hyphens are kept, as 3.11 keeps them"
        );
        assert_eq!(entity_id("O'Brien"), "obrien");
        assert_eq!(entity_id("李雷"), "李雷");
        assert_eq!(predicate_id("Works At"), "works_at");
    }

    #[test]
    fn candidate_patterns_escape_like_wildcards() {
        assert_eq!(candidate_like_patterns("Al", "al"), None);
        let [first, .., last] = candidate_like_patterns("50%_a\\b", "50%_a\\b").unwrap();
        assert_eq!(first, "50\\%\\_a\\\\b %");
        assert_eq!(last, "%\\_50\\%\\_a\\\\b\\_%");
    }

    #[test]
    fn triple_validation() {
        let ok = NewTriple::new(" Max ", "Child Of", "Alice").valid_from("2015-04-01T10:00:00Z");
        let v = ok.validated().unwrap();
        assert_eq!(v.subject, "Max");
        assert_eq!(v.predicate, "child_of");
        assert_eq!(v.valid_from.as_deref(), Some("2015-04-01T10:00:00Z"));
        assert!(NewTriple::new("", "p", "o").validated().is_err());
        assert!(NewTriple::new("s", " ", "o").validated().is_err());
        let mut c = NewTriple::new("s", "p", "o");
        c.confidence = 1.5;
        assert!(c.validated().is_err());
        assert!(
            NewTriple::new("s", "p", "o")
                .valid_from("soon")
                .validated()
                .is_err()
        );
        assert!(
            NewTriple::new("s", "p", "o")
                .valid_from("2025-02-01")
                .valid_to("2025-01-31")
                .validated()
                .is_err()
        );
        assert!("sideways".parse::<Direction>().is_err());
        assert_eq!("BOTH".parse::<Direction>().unwrap(), Direction::Both);
    }
}
