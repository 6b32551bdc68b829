//! The graph's rows as stored, for export and import (`KnowledgeGraph::entity_rows`,
//! `triple_rows`, `import_rows`).

use mempalace_core::Result;
use mempalace_core::kg_rows::{EntityRow, RowsImported, TripleRow, validate_batch};
use rusqlite::{Connection, OptionalExtension, params};

/// Entity rows after `after_id`, by id.
pub fn entity_rows(
    conn: &Connection,
    after_id: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<EntityRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, name, type, properties, created_at FROM entities \
         WHERE ?1 IS NULL OR id > ?1 ORDER BY id LIMIT ?2",
    )?;
    stmt.query_map(params![after_id, limit as i64], |r| {
        Ok(EntityRow {
            id: r.get(0)?,
            name: r.get(1)?,
            entity_type: r.get(2)?,
            properties: r.get(3)?,
            created_at: r.get(4)?,
        })
    })?
    .collect()
}

/// Triple rows after `after_id`, by id.
pub fn triple_rows(
    conn: &Connection,
    after_id: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<TripleRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, subject, predicate, object, valid_from, valid_to, confidence, source_closet, \
         source_file, source_drawer_id, adapter_name, extracted_at FROM triples \
         WHERE ?1 IS NULL OR id > ?1 ORDER BY id LIMIT ?2",
    )?;
    stmt.query_map(params![after_id, limit as i64], |r| {
        Ok(TripleRow {
            id: r.get(0)?,
            subject: r.get(1)?,
            predicate: r.get(2)?,
            object: r.get(3)?,
            valid_from: r.get(4)?,
            valid_to: r.get(5)?,
            confidence: r.get(6)?,
            source_closet: r.get(7)?,
            source_file: r.get(8)?,
            source_drawer_id: r.get(9)?,
            adapter_name: r.get(10)?,
            extracted_at: r.get(11)?,
        })
    })?
    .collect()
}

/// Checks the batch, then inserts each row whose id is absent, all in one transaction.
pub fn import_rows(
    conn: &mut Connection,
    entities: &[EntityRow],
    triples: &[TripleRow],
) -> Result<RowsImported> {
    let op = "import_rows";
    let err = move |e: rusqlite::Error| mempalace_core::PalaceError::kg(op, e);
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(err)?;
    {
        let mut known = tx
            .prepare_cached("SELECT 1 FROM entities WHERE id = ?1")
            .map_err(err)?;
        let mut lookup_failed = None;
        let checked = validate_batch(entities, triples, |id| {
            match known.query_row([id], |_| Ok(())).optional() {
                Ok(found) => found.is_some(),
                Err(e) => {
                    lookup_failed = Some(e);
                    false
                }
            }
        });
        if let Some(e) = lookup_failed {
            return Err(err(e));
        }
        checked?;
    }
    let mut imported = RowsImported::default();
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO entities (id, name, type, properties, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(err)?;
        for e in entities {
            imported.entities += insert
                .execute(params![
                    e.id,
                    e.name,
                    e.entity_type,
                    e.properties,
                    e.created_at
                ])
                .map_err(err)? as u64;
        }
        let mut insert = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO triples (id, subject, predicate, object, valid_from, \
                 valid_to, confidence, source_closet, source_file, source_drawer_id, \
                 adapter_name, extracted_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )
            .map_err(err)?;
        for t in triples {
            imported.triples += insert
                .execute(params![
                    t.id,
                    t.subject,
                    t.predicate,
                    t.object,
                    t.valid_from,
                    t.valid_to,
                    t.confidence,
                    t.source_closet,
                    t.source_file,
                    t.source_drawer_id,
                    t.adapter_name,
                    t.extracted_at
                ])
                .map_err(err)? as u64;
        }
    }
    tx.commit().map_err(err)?;
    Ok(imported)
}

/// SQLite's `PRAGMA integrity_check` findings (other than "ok"), and facts naming entities
/// that are not stored.
pub fn integrity_problems(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut problems: Vec<String> = conn
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        .filter(|line| line != "ok")
        .map(|line| format!("SQLite integrity check: {line}"))
        .collect();
    let dangling: i64 = conn.query_row(
        "SELECT COUNT(*) FROM triples t WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = t.subject) \
         OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = t.object)",
        [],
        |r| r.get(0),
    )?;
    if dangling > 0 {
        problems.push(format!(
            "{dangling} fact(s) name an entity that is not stored"
        ));
    }
    Ok(problems)
}

/// A consistent copy of the database, as of one read transaction, into the new file `target`
/// (SQLite's `VACUUM INTO`: other connections go on writing meanwhile).
pub fn snapshot(conn: &Connection, target: &std::path::Path) -> rusqlite::Result<()> {
    let target = target.to_string_lossy().into_owned();
    conn.execute("VACUUM INTO ?1", [target]).map(|_| ())
}
