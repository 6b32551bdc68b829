//! The graph's tables in one PostgreSQL schema per palace, and the schema's name.

use mempalace_core::{PalaceError, Result};

/// Longest schema name PostgreSQL keeps (NAMEDATALEN - 1).
const MAX_SCHEMA_CHARS: usize = 63;

/// A checked PostgreSQL schema name: lower-case ASCII letters, digits and `_`, starting with a
/// letter or `_`, at most 63 characters, and not one of PostgreSQL's own (`pg_*`,
/// `information_schema`, `public`). Always written quoted in SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaName(String);

impl SchemaName {
    /// Checks `name`.
    pub fn new(name: &str) -> Result<Self> {
        let bad = |why: &str| PalaceError::invalid("schema", format!("{name:?} {why}"));
        let mut chars = name.chars();
        match chars.next() {
            None => return Err(bad("is empty")),
            Some(c) if !(c.is_ascii_lowercase() || c == '_') => {
                return Err(bad("must start with a lower-case letter or _"));
            }
            _ => {}
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(bad("may hold only a-z, 0-9 and _"));
        }
        if name.len() > MAX_SCHEMA_CHARS {
            return Err(bad("is longer than 63 characters"));
        }
        if name.starts_with("pg_") || name == "information_schema" || name == "public" {
            return Err(bad("is PostgreSQL's own"));
        }
        Ok(SchemaName(name.to_string()))
    }

    /// The schema of the palace with this id (`mempalace_{id}`, the id lower-cased and every
    /// other character than a-z, 0-9 made `_`): one palace, one schema.
    pub fn for_palace(palace_id: &str) -> Result<Self> {
        let cleaned: String = palace_id
            .chars()
            .map(|c| {
                let c = c.to_ascii_lowercase();
                if c.is_ascii_lowercase() || c.is_ascii_digit() {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Self::new(&format!("mempalace_{cleaned}"))
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `"name"`, for SQL (the name holds no quote).
    pub(crate) fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

/// The last object [`create_schema_sql`] creates: a schema that has it has them all.
pub(crate) const LAST_SCHEMA_OBJECT: &str = "closets_by_source";

/// The tables and indexes, in schema `{s}`. The columns are MemPalace's SQLite graph's, with
/// text compared byte-wise (`COLLATE "C"`, as SQLite compares), plus `triples_one_open`: at
/// most one open fact per (subject, predicate, object), so writers on many hosts can never
/// file the same current fact twice; and `palace_owner`, the palace the schema belongs to.
/// Beside the graph, the palace's shared sidecars: the coordination log (`events`, `artifacts`,
/// `event_artifacts`: 3.11's `logstream.sqlite3` columns, `seq` the append position), the
/// tunnel and hallway records (`link_records`: each kind's record list as JSON text, so
/// records keep their fields and order), and the closets (`folded`: the text lower-cased by
/// Rust's Unicode rules, whatever the server's locale, for case-blind word search).
pub(crate) fn create_schema_sql(s: &str) -> String {
    format!(
        r#"
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.entities (
    id TEXT COLLATE "C" PRIMARY KEY,
    name TEXT COLLATE "C" NOT NULL,
    type TEXT DEFAULT 'unknown',
    properties TEXT DEFAULT '{{}}',
    created_at TEXT DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
);
CREATE TABLE IF NOT EXISTS {s}.triples (
    id TEXT COLLATE "C" PRIMARY KEY,
    subject TEXT COLLATE "C" NOT NULL REFERENCES {s}.entities(id),
    predicate TEXT COLLATE "C" NOT NULL,
    object TEXT COLLATE "C" NOT NULL REFERENCES {s}.entities(id),
    valid_from TEXT COLLATE "C",
    valid_to TEXT COLLATE "C",
    confidence DOUBLE PRECISION DEFAULT 1.0,
    source_closet TEXT,
    source_file TEXT,
    source_drawer_id TEXT,
    adapter_name TEXT,
    extracted_at TEXT DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
);
CREATE INDEX IF NOT EXISTS idx_triples_subject ON {s}.triples(subject);
CREATE INDEX IF NOT EXISTS idx_triples_object ON {s}.triples(object);
CREATE INDEX IF NOT EXISTS idx_triples_predicate ON {s}.triples(predicate);
CREATE INDEX IF NOT EXISTS idx_triples_valid ON {s}.triples(valid_from, valid_to);
CREATE INDEX IF NOT EXISTS idx_triples_spo ON {s}.triples(subject, predicate, object);
CREATE UNIQUE INDEX IF NOT EXISTS triples_one_open ON {s}.triples(subject, predicate, object)
    WHERE valid_to IS NULL;
CREATE TABLE IF NOT EXISTS {s}.palace_owner (palace_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS {s}.events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE,
    type TEXT NOT NULL,
    stream TEXT NOT NULL,
    room TEXT NOT NULL,
    topic TEXT,
    from_agent TEXT NOT NULL,
    to_agent TEXT,
    correlation_id TEXT,
    branch TEXT,
    base_commit TEXT,
    status TEXT,
    body TEXT NOT NULL DEFAULT '',
    created_at TEXT COLLATE "C" NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '{{}}',
    origin_replica TEXT,
    origin_seq BIGINT,
    hlc TEXT COLLATE "C"
);
CREATE UNIQUE INDEX IF NOT EXISTS events_author_position ON {s}.events(origin_replica, origin_seq);
CREATE INDEX IF NOT EXISTS events_stream_created_idx ON {s}.events(stream, created_at);
CREATE INDEX IF NOT EXISTS events_correlation_idx ON {s}.events(correlation_id, created_at);
CREATE INDEX IF NOT EXISTS events_to_agent_idx ON {s}.events(to_agent, created_at);
CREATE INDEX IF NOT EXISTS events_type_idx ON {s}.events(type, created_at);
CREATE INDEX IF NOT EXISTS events_hlc_idx ON {s}.events(hlc);
CREATE TABLE IF NOT EXISTS {s}.artifacts (
    id TEXT COLLATE "C" PRIMARY KEY,
    kind TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    content TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    metadata_json TEXT NOT NULL DEFAULT '{{}}',
    origin_replica TEXT
);
CREATE TABLE IF NOT EXISTS {s}.event_artifacts (
    event_id TEXT COLLATE "C" NOT NULL,
    artifact_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (event_id, artifact_id)
);
CREATE TABLE IF NOT EXISTS {s}.link_records (
    kind TEXT PRIMARY KEY,
    records TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.closets (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    id TEXT COLLATE "C" PRIMARY KEY,
    text TEXT NOT NULL,
    folded TEXT NOT NULL,
    wing TEXT NOT NULL,
    room TEXT NOT NULL,
    source_file TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS closets_by_source ON {s}.closets(source_file);
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_checked() {
        for ok in ["mempalace_0f3a", "_x", "a1_b2"] {
            assert_eq!(SchemaName::new(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "",
            "1abc",
            "Upper",
            "a-b",
            "a\"; DROP SCHEMA x; --",
            "pg_catalog",
            "public",
            &"a".repeat(64),
        ] {
            assert!(SchemaName::new(bad).is_err(), "{bad}");
        }
        assert_eq!(
            SchemaName::for_palace("0F3A-b.9").unwrap().as_str(),
            "mempalace_0f3a_b_9"
        );
        assert_eq!(SchemaName::new("x").unwrap().quoted(), "\"x\"");
    }
}
