//! `SqliteKnowledgeGraph`: the `KnowledgeGraph` trait over one SQLite file.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use mempalace_core::disk_space::with_full_disk_note;
use mempalace_core::kg_rows::{EntityRow, RowsImported, TripleRow};
use mempalace_core::knowledge_graph::{
    ValidatedSupersede, entity_id, invalidation, predicate_id, triple_id,
};
use mempalace_core::temporal::{as_of_key, ends_before_start};
use mempalace_core::{
    Direction, EntityCandidate, Fact, KgStats, KnowledgeGraph, NewEntity, NewTriple, Page,
    PalaceError, Result, Supersede, Supersession,
};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use crate::facts::{
    entity_candidates, entity_exists, entity_facts, relationship_facts, timeline_count,
    timeline_facts,
};
use crate::schema::{cannot_write_now, is_read_only, open_read_only, prepare, wal_is_empty};

/// Where the graph lives.
#[derive(Debug, Clone)]
enum Location {
    File(PathBuf),
    Memory,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::File(path) => write!(f, "{}", path.display()),
            Location::Memory => f.write_str("the in-memory graph"),
        }
    }
}

struct Inner {
    location: Location,
    conn: Mutex<Option<Connection>>,
}

/// A MemPalace knowledge graph stored in SQLite.
///
/// Cheap to clone (clones share the connection). All SQLite work runs on tokio's blocking
/// threads, so async callers are never stalled by disk I/O.
#[derive(Clone)]
pub struct SqliteKnowledgeGraph {
    inner: Arc<Inner>,
}

impl SqliteKnowledgeGraph {
    /// A graph in the file at `path` (created with its folder on the first write).
    pub fn open(path: impl Into<PathBuf>) -> Self {
        Self::with_location(Location::File(path.into()))
    }

    /// A graph in `palace_dir/knowledge_graph.sqlite3`.
    pub fn in_palace(palace_dir: &Path) -> Self {
        Self::open(palace_dir.join(crate::KG_FILE_NAME))
    }

    /// A private in-memory graph (for tests and throwaway palaces).
    pub fn in_memory() -> Self {
        Self::with_location(Location::Memory)
    }

    fn with_location(location: Location) -> Self {
        SqliteKnowledgeGraph {
            inner: Arc::new(Inner {
                location,
                conn: Mutex::new(None),
            }),
        }
    }

    /// The file path, or None for an in-memory graph.
    pub fn path(&self) -> Option<&Path> {
        match &self.inner.location {
            Location::File(p) => Some(p),
            Location::Memory => None,
        }
    }

    /// Runs `f` on the connection. With `create` false and no database yet, returns
    /// `Ok(None)` without creating anything. On a multi-threaded runtime `f` runs right here
    /// with [`tokio::task::block_in_place`] (the runtime hands this thread's other work to
    /// another worker), which costs less than the hop to the blocking pool and back, itself
    /// more than a typical indexed read or a one-fact write; elsewhere it runs on the blocking
    /// pool. A write that waits for another process's write lock waits here the same way.
    #[tracing::instrument(level = "debug", skip_all, fields(operation = operation))]
    async fn run<T: Send + 'static>(
        &self,
        operation: &'static str,
        create: bool,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<Option<T>> {
        let multi_threaded = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_threaded {
            return tokio::task::block_in_place(|| {
                on_connection(&self.inner, operation, create, f)
            });
        }
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || on_connection(&inner, operation, create, f))
            .await
            .map_err(|e| PalaceError::kg(operation, format!("worker thread failed: {e}")))?
    }

    /// Like `run`, for writes: creates the database when missing.
    async fn write<T: Send + 'static>(
        &self,
        operation: &'static str,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        Ok(self
            .run(operation, true, f)
            .await?
            .expect("a created database always runs the operation"))
    }

    /// Like `read`, for a read bounded by index lookups: when the connection is open and no
    /// other task holds it, `f` runs right here on the async worker. `block_in_place` would
    /// hand the worker's queue to another thread and take it back, which costs more than such
    /// a read (kg_query through the MCP server: 0.15 ms p50 with the hand-off, 0.07 without).
    /// Scans go through `read`, so a long one never holds up a worker.
    #[tracing::instrument(level = "debug", skip_all, fields(operation = operation))]
    async fn lookup<T: Send + 'static>(
        &self,
        operation: &'static str,
        default: T,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if let Ok(mut slot) = self.inner.conn.try_lock()
            && let Some(conn) = slot.as_mut()
        {
            return f(conn);
        }
        self.read(operation, default, f).await
    }

    /// Like `run`, for reads: `default` when the database does not exist.
    async fn read<T: Send + 'static>(
        &self,
        operation: &'static str,
        default: T,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        Ok(self.run(operation, false, f).await?.unwrap_or(default))
    }
}

/// Runs `f` on the graph's connection, opening it first if needed (`Ok(None)` when `create`
/// is false and there is no database yet).
fn on_connection<T>(
    inner: &Inner,
    operation: &'static str,
    create: bool,
    f: impl FnOnce(&mut Connection) -> Result<T>,
) -> Result<Option<T>> {
    let mut slot = inner.conn.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        let opened = open_connection(&inner.location, create);
        // A read on a disk that is full right now reads through a read-only connection that
        // is not kept: the next call opens a writable one again once space is freed.
        if !create
            && let (Err(e), Location::File(path)) = (&opened, &inner.location)
            && cannot_write_now(e)
            && path.exists()
            && wal_is_empty(path)
            && let Ok(mut conn) = open_read_only(path)
        {
            return f(&mut conn).map(Some);
        }
        match opened.map_err(|e| {
            let message = format!("opening {}: {e}", inner.location);
            PalaceError::kg(
                operation,
                match &inner.location {
                    Location::File(path) => with_full_disk_note(message, path),
                    Location::Memory => message,
                },
            )
        })? {
            Some(conn) => *slot = Some(conn),
            None => return Ok(None),
        }
    }
    let conn = slot.as_mut().expect("connection was just opened");
    f(conn).map(Some)
}

/// Opens (and, when `create`, creates) the database; `None` when it does not exist.
fn open_connection(location: &Location, create: bool) -> rusqlite::Result<Option<Connection>> {
    let mut conn = match location {
        Location::Memory => {
            if !create {
                return Ok(None);
            }
            Connection::open_in_memory()?
        }
        Location::File(path) => {
            if !path.exists() {
                if !create {
                    return Ok(None);
                }
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        rusqlite::Error::SqliteFailure(
                            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
                            Some(format!("cannot create {}: {e}", parent.display())),
                        )
                    })?;
                }
            }
            let mut conn = Connection::open(path)?;
            return match prepare(&mut conn) {
                Ok(()) => Ok(Some(conn)),
                // A read-only palace: reads work, writes fail with SQLite's read-only error.
                Err(e) if is_read_only(&e) && !create => {
                    drop(conn);
                    open_read_only(path).map(Some)
                }
                Err(e) => Err(e),
            };
        }
    };
    prepare(&mut conn)?;
    Ok(Some(conn))
}

/// Maps a rusqlite error to a typed KG error for `operation`.
fn sql(operation: &'static str) -> impl Fn(rusqlite::Error) -> PalaceError {
    move |e| PalaceError::kg(operation, e)
}

fn immediate<'c>(conn: &'c mut Connection, operation: &'static str) -> Result<Transaction<'c>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql(operation))
}

/// The open fact with this subject, predicate and object (the duplicate check of a write).
const OPEN_TRIPLE_SQL: &str = "SELECT id FROM triples WHERE subject = ?1 AND predicate = ?2 AND object = ?3 AND valid_to IS NULL";

/// Inserts the entity if missing (keeping an existing display name), returns its id.
fn ensure_entity(tx: &Transaction<'_>, name: &str) -> rusqlite::Result<String> {
    let id = entity_id(name);
    tx.prepare_cached("INSERT OR IGNORE INTO entities (id, name) VALUES (?1, ?2)")?
        .execute(params![id, name])?;
    Ok(id)
}

/// Inserts a validated triple unless the same one is already there; returns its id.
fn insert_triple(tx: &Transaction<'_>, t: &NewTriple) -> rusqlite::Result<String> {
    let sub = ensure_entity(tx, &t.subject)?;
    let obj = ensure_entity(tx, &t.object)?;
    // As 3.11: while the same fact is current, adding it again (with any interval) returns
    // the current one.
    let existing: Option<String> = tx
        .prepare_cached(OPEN_TRIPLE_SQL)?
        .query_row(params![sub, t.predicate, obj], |r| r.get(0))
        .optional()?;
    if let Some(id) = existing {
        return Ok(id);
    }
    let id = triple_id(&sub, &t.predicate, &obj, t.valid_from.as_deref());
    tx.prepare_cached(
        "INSERT INTO triples (id, subject, predicate, object, valid_from, valid_to, confidence,
                              source_closet, source_file, source_drawer_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        id,
        sub,
        t.predicate,
        obj,
        t.valid_from,
        t.valid_to,
        t.confidence,
        t.source_closet,
        t.source_file,
        t.source_drawer_id,
    ])?;
    Ok(id)
}

/// The valid_from of every open (subject, predicate, object) fact.
fn open_fact_starts(
    tx: &Transaction<'_>,
    sub: &str,
    pred: &str,
    obj: &str,
) -> rusqlite::Result<Vec<Option<String>>> {
    let mut stmt = tx.prepare_cached(
        "SELECT valid_from FROM triples WHERE subject = ?1 AND predicate = ?2 AND object = ?3 AND valid_to IS NULL",
    )?;
    let rows = stmt.query_map(params![sub, pred, obj], |r| r.get(0))?;
    rows.collect()
}

/// Sets valid_to on the open (subject, predicate, object) facts; errors, changing nothing, if
/// that would end a fact before it started.
fn close_open_facts(
    tx: &Transaction<'_>,
    sub: &str,
    pred: &str,
    obj: &str,
    ended: &str,
) -> Result<u64> {
    let op = "invalidate";
    for start in open_fact_starts(tx, sub, pred, obj)
        .map_err(sql(op))?
        .into_iter()
        .flatten()
    {
        if ends_before_start(&start, ended) {
            return Err(PalaceError::invalid(
                "ended",
                format!("{ended} is before the fact's valid_from {start}"),
            ));
        }
    }
    let n = tx
        .prepare_cached(
            "UPDATE triples SET valid_to = ?4 WHERE subject = ?1 AND predicate = ?2 AND object = ?3 AND valid_to IS NULL",
        )
        .and_then(|mut s| s.execute(params![sub, pred, obj, ended]))
        .map_err(sql(op))?;
    Ok(n as u64)
}

#[async_trait]
impl KnowledgeGraph for SqliteKnowledgeGraph {
    async fn exists(&self) -> Result<bool> {
        match &self.inner.location {
            Location::File(path) => Ok(path.exists()),
            Location::Memory => Ok(self
                .inner
                .conn
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_some()),
        }
    }

    async fn create_if_missing(&self) -> Result<()> {
        // An open connection means the database exists: no trip to the blocking pool.
        if let Ok(slot) = self.inner.conn.try_lock()
            && slot.is_some()
        {
            return Ok(());
        }
        self.write("create", |_| Ok(())).await
    }

    async fn add_entity(&self, entity: &NewEntity) -> Result<String> {
        entity.validate()?;
        let id = entity_id(&entity.name);
        let (name, kind, props) = (
            entity.name.trim().to_string(),
            entity.entity_type.trim().to_string(),
            entity.properties.to_string(),
        );
        let op = "add_entity";
        self.write(op, move |conn| {
            conn.execute(
                "INSERT INTO entities (id, name, type, properties) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET name = excluded.name, type = excluded.type,
                                               properties = excluded.properties",
                params![id, name, kind, props],
            )
            .map_err(sql(op))?;
            Ok(id)
        })
        .await
    }

    async fn add_triple(&self, triple: &NewTriple) -> Result<String> {
        let t = triple.validated()?;
        let op = "add_triple";
        self.write(op, move |conn| {
            let tx = immediate(conn, op)?;
            let id = insert_triple(&tx, &t).map_err(sql(op))?;
            tx.commit().map_err(sql(op))?;
            Ok(id)
        })
        .await
    }

    async fn invalidate(
        &self,
        subject: &str,
        predicate: &str,
        object: &str,
        ended: Option<&str>,
    ) -> Result<u64> {
        let ([sub, pred, obj], ended) = invalidation(subject, predicate, object, ended)?;
        if !self.exists().await? {
            return Ok(0);
        }
        let op = "invalidate";
        self.write(op, move |conn| {
            let tx = immediate(conn, op)?;
            let n = close_open_facts(&tx, &sub, &pred, &obj, &ended)?;
            tx.commit().map_err(sql(op))?;
            Ok(n)
        })
        .await
    }

    async fn supersede(&self, change: &Supersede) -> Result<Supersession> {
        // As 3.11: the old fact closes and the new one opens at one shared instant, in one
        // transaction. With no current old fact the new one still opens (a plain add); when
        // the new one is already current its id is returned and nothing else changes.
        let ValidatedSupersede {
            at,
            new,
            closes: [sub, pred, old_obj],
        } = change.validated()?;
        let op = "supersede";
        self.write(op, move |conn| {
            let tx = immediate(conn, op)?;
            for start in open_fact_starts(&tx, &sub, &pred, &old_obj)
                .map_err(sql(op))?
                .into_iter()
                .flatten()
            {
                if ends_before_start(&start, &at) {
                    return Err(PalaceError::invalid(
                        "at",
                        format!("at={at:?} is before valid_from={start:?}; an inverted interval would be invisible to every query"),
                    ));
                }
            }
            tx.prepare_cached(
                "UPDATE triples SET valid_to = ?4 WHERE subject = ?1 AND predicate = ?2 AND object = ?3 AND valid_to IS NULL",
            )
            .and_then(|mut s| s.execute(params![sub, pred, old_obj, at]))
            .map_err(sql(op))?;
            let new_triple_id = insert_triple(&tx, &new).map_err(sql(op))?;
            tx.commit().map_err(sql(op))?;
            Ok(Supersession {
                new_triple_id,
                old_valid_to: at.clone(),
                new_valid_from: at,
            })
        })
        .await
    }

    async fn query_entity(
        &self,
        name: &str,
        as_of: Option<&str>,
        direction: Direction,
    ) -> Result<Vec<Fact>> {
        let as_of = as_of_key(as_of)?;
        let name = name.trim().to_string();
        let id = entity_id(&name);
        let op = "query_entity";
        let (known_id, known_name, known_as_of) = (id.clone(), name.clone(), as_of.clone());
        let known = self
            .lookup(op, Some(Vec::new()), move |conn| {
                let (id, as_of) = (&known_id, known_as_of.as_deref());
                let facts =
                    entity_facts(conn, id, &known_name, as_of, direction).map_err(sql(op))?;
                let known = !facts.is_empty() || entity_exists(conn, id).map_err(sql(op))?;
                Ok(known.then_some(facts))
            })
            .await?;
        if let Some(facts) = known {
            return Ok(facts);
        }
        self.read(op, Vec::new(), move |conn| {
            // As 3.11: an unknown name that matches exactly one entity by whole words or id
            // parts ("Alice" for "Alice Smith") answers with that entity's facts.
            match entity_candidates(conn, &name, &id)
                .map_err(sql(op))?
                .as_slice()
            {
                [only] => entity_facts(conn, &only.id, &only.name, as_of.as_deref(), direction)
                    .map_err(sql(op)),
                _ => Ok(Vec::new()),
            }
        })
        .await
    }

    async fn entity_candidates(&self, name: &str) -> Result<Vec<EntityCandidate>> {
        let name = name.trim().to_string();
        let id = entity_id(&name);
        let op = "entity_candidates";
        self.read(op, Vec::new(), move |conn| {
            entity_candidates(conn, &name, &id).map_err(sql(op))
        })
        .await
    }

    async fn snapshot_into(&self, palace_dir: &Path) -> Result<bool> {
        let target = palace_dir.join(crate::KG_FILE_NAME);
        let op = "snapshot";
        self.read(op, false, move |conn| {
            crate::rows::snapshot(conn, &target).map_err(sql(op))?;
            Ok(true)
        })
        .await
    }

    async fn integrity_problems(&self) -> Result<Vec<String>> {
        let op = "integrity_problems";
        self.read(op, Vec::new(), move |conn| {
            crate::rows::integrity_problems(conn).map_err(sql(op))
        })
        .await
    }

    async fn entity_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<EntityRow>> {
        let after = after_id.map(str::to_string);
        let op = "entity_rows";
        self.read(op, Vec::new(), move |conn| {
            crate::rows::entity_rows(conn, after.as_deref(), limit).map_err(sql(op))
        })
        .await
    }

    async fn triple_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<TripleRow>> {
        let after = after_id.map(str::to_string);
        let op = "triple_rows";
        self.read(op, Vec::new(), move |conn| {
            crate::rows::triple_rows(conn, after.as_deref(), limit).map_err(sql(op))
        })
        .await
    }

    async fn import_rows(
        &self,
        entities: &[EntityRow],
        triples: &[TripleRow],
    ) -> Result<RowsImported> {
        let (entities, triples) = (entities.to_vec(), triples.to_vec());
        self.write("import_rows", move |conn| {
            crate::rows::import_rows(conn, &entities, &triples)
        })
        .await
    }

    async fn query_relationship(&self, predicate: &str, as_of: Option<&str>) -> Result<Vec<Fact>> {
        let as_of = as_of_key(as_of)?;
        let pred = predicate_id(predicate);
        let op = "query_relationship";
        self.read(op, Vec::new(), move |conn| {
            relationship_facts(conn, &pred, as_of.as_deref()).map_err(sql(op))
        })
        .await
    }

    async fn timeline(&self, entity: Option<&str>, page: Page) -> Result<Vec<Fact>> {
        let id = entity.map(entity_id);
        let op = "timeline";
        self.read(op, Vec::new(), move |conn| {
            timeline_facts(conn, id.as_deref(), page.limit, page.offset).map_err(sql(op))
        })
        .await
    }

    async fn timeline_total(&self, entity: Option<&str>) -> Result<u64> {
        let id = entity.map(entity_id);
        let op = "timeline_total";
        self.read(op, 0, move |conn| {
            timeline_count(conn, id.as_deref()).map_err(sql(op))
        })
        .await
    }

    async fn stats(&self) -> Result<KgStats> {
        let op = "stats";
        let empty = KgStats {
            entities: 0,
            triples: 0,
            current_facts: 0,
            expired_facts: 0,
            relationship_types: Vec::new(),
            predicates: Default::default(),
            current_predicates: Default::default(),
        };
        self.read(op, empty, move |conn| {
            // One read transaction: every count sees the same snapshot, even while other
            // processes write (separate statements could see current > total).
            let tx = conn.transaction().map_err(sql(op))?;
            let (entities, triples, current_facts) = tx
                .query_row(
                    "SELECT (SELECT COUNT(*) FROM entities), (SELECT COUNT(*) FROM triples), \
                     (SELECT COUNT(*) FROM triples WHERE valid_to IS NULL)",
                    [],
                    |r| {
                        Ok((
                            r.get::<_, i64>(0)?.max(0) as u64,
                            r.get::<_, i64>(1)?.max(0) as u64,
                            r.get::<_, i64>(2)?.max(0) as u64,
                        ))
                    },
                )
                .map_err(sql(op))?;
            // One pass: all facts and the open ones per predicate.
            let mut stmt = tx
                .prepare(
                    "SELECT predicate, COUNT(*), SUM(valid_to IS NULL) FROM triples \
                     GROUP BY predicate ORDER BY predicate",
                )
                .map_err(sql(op))?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?.max(0) as u64,
                        r.get::<_, i64>(2)?.max(0) as u64,
                    ))
                })
                .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
                .map_err(sql(op))?;
            drop(stmt);
            let predicates: std::collections::BTreeMap<String, u64> =
                rows.iter().map(|(p, all, _)| (p.clone(), *all)).collect();
            let current_predicates: std::collections::BTreeMap<String, u64> = rows
                .into_iter()
                .filter(|(_, _, open)| *open > 0)
                .map(|(p, _, open)| (p, open))
                .collect();
            tx.finish().map_err(sql(op))?;
            Ok(KgStats {
                entities,
                triples,
                current_facts,
                expired_facts: triples.saturating_sub(current_facts),
                relationship_types: predicates.keys().cloned().collect(),
                predicates,
                current_predicates,
            })
        })
        .await
    }
}

impl SqliteKnowledgeGraph {
    /// Adds many triples in one transaction (all or none); returns their ids in order.
    pub async fn add_triples(&self, triples: &[NewTriple]) -> Result<Vec<String>> {
        let validated: Vec<NewTriple> = triples
            .iter()
            .map(NewTriple::validated)
            .collect::<Result<_>>()?;
        let op = "add_triples";
        self.write(op, move |conn| {
            let tx = immediate(conn, op)?;
            let ids = validated
                .iter()
                .map(|t| insert_triple(&tx, t))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(sql(op))?;
            tx.commit().map_err(sql(op))?;
            Ok(ids)
        })
        .await
    }

    /// The query plan SQLite picks for the duplicate check of `add_triple` (one line per
    /// step), so tests can check it uses the subject/predicate/object index.
    pub async fn explain_duplicate_check(&self) -> Result<Vec<String>> {
        let op = "explain";
        self.write(op, move |conn| {
            let mut stmt = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {OPEN_TRIPLE_SQL}"))
                .map_err(sql(op))?;
            let rows = stmt
                .query_map(params!["s", "p", "o"], |r| r.get::<_, String>(3))
                .map_err(sql(op))?;
            rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sql(op))
        })
        .await
    }

    /// The query plan SQLite picks for an entity query (one line per step), so tests can
    /// check that the subject/object indexes are used.
    pub async fn explain_entity_query(&self, incoming: bool) -> Result<Vec<String>> {
        let op = "explain";
        self.write(op, move |conn| {
            crate::facts::entity_query_plan(conn, incoming).map_err(sql(op))
        })
        .await
    }
}
