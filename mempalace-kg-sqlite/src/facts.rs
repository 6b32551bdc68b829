//! Reading facts: the SQL shared by entity, relationship and timeline queries.

use mempalace_core::{Direction, Fact};
use rusqlite::{Connection, Row, params};

/// Columns of a fact, with display names joined from `entities`.
const FACT_SELECT: &str =
    "SELECT COALESCE(s.name, t.subject), t.predicate, COALESCE(o.name, t.object),
        t.valid_from, t.valid_to, t.confidence, t.source_closet
    FROM triples t
    LEFT JOIN entities s ON s.id = t.subject
    LEFT JOIN entities o ON o.id = t.object";

/// Validity at `?2` (NULL: no date restriction); see `mempalace_core::temporal`.
const VALID_AT: &str = "(?2 IS NULL OR ((t.valid_from IS NULL OR t.valid_from <= ?2 || '~')
    AND (t.valid_to IS NULL OR t.valid_to || '~' >= ?2)))";

/// Chronological order, undated facts last, insertion order among equals.
const CHRONOLOGICAL: &str = "ORDER BY t.valid_from IS NULL, t.valid_from, t.rowid";

fn fact_from_row(row: &Row<'_>, direction: Option<Direction>) -> rusqlite::Result<Fact> {
    let valid_to: Option<String> = row.get(4)?;
    Ok(Fact {
        direction,
        subject: row.get(0)?,
        predicate: row.get(1)?,
        object: row.get(2)?,
        valid_from: row.get(3)?,
        current: valid_to.is_none(),
        valid_to,
        confidence: row.get::<_, Option<f64>>(5)?.unwrap_or(1.0),
        source_closet: row.get(6)?,
    })
}

/// Facts where `entity_id` is the subject (outgoing) or object (incoming), valid at `as_of`.
pub(crate) fn entity_facts(
    conn: &Connection,
    entity_id: &str,
    as_of: Option<&str>,
    direction: Direction,
) -> rusqlite::Result<Vec<Fact>> {
    let mut facts = Vec::new();
    let sides: &[(Direction, &str)] = match direction {
        Direction::Outgoing => &[(Direction::Outgoing, "t.subject")],
        Direction::Incoming => &[(Direction::Incoming, "t.object")],
        Direction::Both => &[
            (Direction::Outgoing, "t.subject"),
            (Direction::Incoming, "t.object"),
        ],
    };
    for (side, column) in sides {
        let sql = format!("{FACT_SELECT} WHERE {column} = ?1 AND {VALID_AT} {CHRONOLOGICAL}");
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![entity_id, as_of], |r| fact_from_row(r, Some(*side)))?;
        for fact in rows {
            facts.push(fact?);
        }
    }
    Ok(facts)
}

/// Facts with predicate `predicate_id`, valid at `as_of`.
pub(crate) fn relationship_facts(
    conn: &Connection,
    predicate_id: &str,
    as_of: Option<&str>,
) -> rusqlite::Result<Vec<Fact>> {
    let sql = format!("{FACT_SELECT} WHERE t.predicate = ?1 AND {VALID_AT} {CHRONOLOGICAL}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![predicate_id, as_of], |r| fact_from_row(r, None))?;
    rows.collect()
}

/// The timeline of one entity (or all facts when `entity_id` is None), one page.
pub(crate) fn timeline_facts(
    conn: &Connection,
    entity_id: Option<&str>,
    limit: usize,
    offset: usize,
) -> rusqlite::Result<Vec<Fact>> {
    let (limit, offset) = (limit as i64, offset as i64);
    match entity_id {
        Some(id) => {
            let sql = format!(
                "{FACT_SELECT} WHERE t.rowid IN (SELECT rowid FROM triples WHERE subject = ?1
                    UNION SELECT rowid FROM triples WHERE object = ?1)
                 {CHRONOLOGICAL} LIMIT ?2 OFFSET ?3"
            );
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params![id, limit, offset], |r| fact_from_row(r, None))?;
            rows.collect()
        }
        None => {
            let sql = format!("{FACT_SELECT} {CHRONOLOGICAL} LIMIT ?1 OFFSET ?2");
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(params![limit, offset], |r| fact_from_row(r, None))?;
            rows.collect()
        }
    }
}

/// `EXPLAIN QUERY PLAN` of the entity query for one side, for tests that check index use.
#[doc(hidden)]
pub fn entity_query_plan(conn: &Connection, incoming: bool) -> rusqlite::Result<Vec<String>> {
    let column = if incoming { "t.object" } else { "t.subject" };
    let sql = format!(
        "EXPLAIN QUERY PLAN {FACT_SELECT} WHERE {column} = ?1 AND {VALID_AT} {CHRONOLOGICAL}"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params!["x", "2025-01-01"], |r| r.get::<_, String>(3))?;
    rows.collect()
}
