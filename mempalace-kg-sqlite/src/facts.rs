//! Reading facts: the SQL shared by entity, relationship and timeline queries.

use mempalace_core::knowledge_graph::candidate_like_patterns;
use mempalace_core::{Direction, EntityCandidate, Fact};
use rusqlite::{Connection, Row, params};

/// Columns of a fact, with display names joined from `entities`.
const FACT_SELECT: &str =
    "SELECT COALESCE(s.name, t.subject), t.predicate, COALESCE(o.name, t.object),
        t.valid_from, t.valid_to, t.confidence, t.source_closet
    FROM triples t
    LEFT JOIN entities s ON s.id = t.subject
    LEFT JOIN entities o ON o.id = t.object";

/// Validity at `?2`, the as-of instant's start key (NULL: no date restriction): 3.11's
/// filter, a date-only bound compared as its first (valid_from) or last (valid_to) second,
/// half-open at the top; see `mempalace_core::temporal`.
const VALID_AT: &str = "(?2 IS NULL OR (
    (t.valid_from IS NULL OR (CASE WHEN length(t.valid_from) = 10 AND substr(t.valid_from, 5, 1) = '-'
        AND substr(t.valid_from, 8, 1) = '-' THEN t.valid_from || 'T00:00:00Z' ELSE t.valid_from END) <= ?2)
    AND (t.valid_to IS NULL OR (CASE WHEN length(t.valid_to) = 10 AND substr(t.valid_to, 5, 1) = '-'
        AND substr(t.valid_to, 8, 1) = '-' THEN t.valid_to || 'T23:59:59Z' ELSE t.valid_to END) > ?2)))";

/// Chronological order, undated facts last, then by id (3.11's timeline order).
const CHRONOLOGICAL: &str = "ORDER BY t.valid_from IS NULL, t.valid_from, t.id";

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

/// The query of one side of [`entity_facts`]: facts whose `column` is the entity.
fn entity_facts_sql(column: &str) -> String {
    format!("{FACT_SELECT} WHERE {column} = ?1 AND {VALID_AT} {CHRONOLOGICAL}")
}

/// Facts where `entity_id` is the subject (outgoing) or object (incoming), valid at `as_of`;
/// the entity's side carries `name`, the name it was asked for (as 3.11 answers).
pub(crate) fn entity_facts(
    conn: &Connection,
    entity_id: &str,
    name: &str,
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
        let mut stmt = conn.prepare_cached(&entity_facts_sql(column))?;
        let rows = stmt.query_map(params![entity_id, as_of], |r| fact_from_row(r, Some(*side)))?;
        for fact in rows {
            let mut fact = fact?;
            match side {
                Direction::Incoming => fact.object = name.to_string(),
                _ => fact.subject = name.to_string(),
            }
            facts.push(fact);
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

/// How many facts the timeline of one entity (or of all, when `entity_id` is None) holds.
pub(crate) fn timeline_count(conn: &Connection, entity_id: Option<&str>) -> rusqlite::Result<u64> {
    let count: i64 = match entity_id {
        Some(id) => conn
            .prepare_cached(
                "SELECT COUNT(*) FROM (SELECT rowid FROM triples WHERE subject = ?1
                    UNION SELECT rowid FROM triples WHERE object = ?1)",
            )?
            .query_row(params![id], |r| r.get(0))?,
        None => conn
            .prepare_cached("SELECT COUNT(*) FROM triples")?
            .query_row([], |r| r.get(0))?,
    };
    Ok(count.max(0) as u64)
}

/// 3.11's entity candidates for `name` (id `entity_id`): at most 5 entities, other than the
/// exact one, whose name has `name` as a whole space-separated part or whose id has the id as
/// a whole `_`-separated part (SQLite's `LIKE`: case-insensitive for ASCII).
pub(crate) fn entity_candidates(
    conn: &Connection,
    name: &str,
    entity_id: &str,
) -> rusqlite::Result<Vec<EntityCandidate>> {
    let name = name.trim();
    let Some([p1, p2, p3, p4, p5, p6]) = candidate_like_patterns(name, entity_id) else {
        return Ok(Vec::new());
    };
    let mut stmt = conn.prepare_cached(
        "SELECT id, name FROM entities WHERE id = ?1 OR name = ?2
            OR name LIKE ?3 ESCAPE '\\' OR name LIKE ?4 ESCAPE '\\' OR name LIKE ?5 ESCAPE '\\'
            OR id LIKE ?6 ESCAPE '\\' OR id LIKE ?7 ESCAPE '\\' OR id LIKE ?8 ESCAPE '\\'
         LIMIT 5",
    )?;
    let rows = stmt.query_map(params![entity_id, name, p1, p2, p3, p4, p5, p6], |r| {
        Ok(EntityCandidate {
            id: r.get(0)?,
            name: r.get(1)?,
        })
    })?;
    let mut out = Vec::new();
    for c in rows {
        let c = c?;
        if c.id != entity_id {
            out.push(c);
        }
    }
    Ok(out)
}

/// Whether an entity with this id exists.
pub(crate) fn entity_exists(conn: &Connection, entity_id: &str) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT 1 FROM entities WHERE id = ?1")?
        .exists(params![entity_id])
}

/// `EXPLAIN QUERY PLAN` of the entity query for one side, for tests that check index use.
#[doc(hidden)]
pub fn entity_query_plan(conn: &Connection, incoming: bool) -> rusqlite::Result<Vec<String>> {
    let column = if incoming { "t.object" } else { "t.subject" };
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", entity_facts_sql(column)))?;
    let rows = stmt.query_map(params!["x", "2025-01-01"], |r| r.get::<_, String>(3))?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::prepare;
    use rusqlite::StatementStatus;

    /// Asking about one entity after another reuses the prepared fact query: SQLite does not
    /// parse and plan it again because a parameter changed.
    #[test]
    fn fact_queries_keep_their_plan_across_entities() {
        let mut conn = Connection::open_in_memory().unwrap();
        prepare(&mut conn).unwrap();
        for i in 0..3 {
            conn.execute(
                "INSERT INTO entities (id, name) VALUES (?1, ?1), (?2, ?2)",
                params![format!("service_{i}"), format!("db_{i}")],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO triples (id, subject, predicate, object) VALUES (?1, ?2, 'uses', ?3)",
                params![format!("t{i}"), format!("service_{i}"), format!("db_{i}")],
            )
            .unwrap();
        }
        for i in 0..3 {
            let name = format!("service_{i}");
            let facts = entity_facts(&conn, &name, &name, None, Direction::Both).unwrap();
            assert_eq!(facts.len(), 1);
            assert_eq!(facts[0].object, format!("db_{i}"));
        }
        for column in ["t.subject", "t.object"] {
            let stmt = conn.prepare_cached(&entity_facts_sql(column)).unwrap();
            assert_eq!(stmt.get_status(StatementStatus::Run), 3, "{column}");
            assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "{column}");
        }
    }
}
