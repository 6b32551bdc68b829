//! `PostgresKnowledgeGraph`: the `KnowledgeGraph` trait over one PostgreSQL schema.

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use mempalace_core::kg_rows::{EntityRow, RowsImported, TripleRow, validate_batch};
use mempalace_core::knowledge_graph::{
    ValidatedSupersede, candidate_like_patterns, entity_id, invalidation, predicate_id, triple_id,
};
use mempalace_core::temporal::{as_of_key, ends_before_start};
use mempalace_core::{
    Direction, EntityCandidate, Fact, KgStats, KnowledgeGraph, NewEntity, NewTriple, Page,
    PalaceError, Result, Supersede, Supersession,
};
use tokio_postgres::{IsolationLevel, Row};

use crate::connection::{PostgresTls, pg};
use crate::palace_schema::PalaceSchema;
use crate::schema::SchemaName;

/// A MemPalace knowledge graph in one PostgreSQL schema, shared by every process and host
/// that opens the same server and schema.
///
/// Writes are transactions: a duplicate open fact cannot be filed by two hosts at once (a
/// unique index on open facts), and supersede and invalidate lock the rows they close. Reads of
/// a schema that does not exist yet return empty results and create nothing. Cheap to clone.
/// The palace's other PostgreSQL adapters ([`crate::PostgresCoordinationLog`],
/// [`crate::PostgresLinks`], [`crate::PostgresClosets`], [`crate::PostgresWriteLock`]) are
/// made from it and share its connections.
#[derive(Clone)]
pub struct PostgresKnowledgeGraph {
    pub(crate) db: PalaceSchema,
}

impl PostgresKnowledgeGraph {
    /// A graph in `schema` of the database at `url` (`postgres://user@host:port/db`, key=value
    /// form works too), with TLS as [`PostgresTls::default`] sets it (used when the server
    /// offers it, always verified). Nothing is connected until the first call.
    pub fn connect(url: &str, schema: SchemaName) -> Result<Self> {
        Self::connect_with_tls(url, schema, PostgresTls::default())
    }

    /// [`PostgresKnowledgeGraph::connect`] with the TLS settings `tls` (e.g. a CA file).
    pub fn connect_with_tls(url: &str, schema: SchemaName, tls: PostgresTls) -> Result<Self> {
        Ok(PostgresKnowledgeGraph {
            db: PalaceSchema::connect(url, schema, tls)?,
        })
    }

    /// Checks that the schema belongs to the palace `palace_id` (recorded in the schema when
    /// it is created, or claimed when it has no owner yet): opening another palace's schema is
    /// an error, so two palaces on one server never share a graph.
    pub fn with_owner(mut self, palace_id: impl Into<String>) -> Self {
        self.db = self.db.with_owner(palace_id);
        self
    }

    /// The schema holding the graph.
    pub fn schema(&self) -> &SchemaName {
        &self.db.schema
    }

    async fn client(&self, operation: &'static str) -> Result<deadpool_postgres::Object> {
        self.db.client(operation).await
    }

    /// Whether the graph's tables exist (remembered once they do).
    async fn tables_exist(&self, operation: &'static str) -> Result<bool> {
        self.db.has_table("triples", operation).await
    }

    /// Creates the schema and tables if missing.
    async fn ensure_tables(&self) -> Result<()> {
        self.db.ensure_tables().await
    }

    /// `sql` with `{s}` replaced by the quoted schema.
    fn sql(&self, sql: &str) -> String {
        self.db.sql(sql)
    }

    /// Adds many triples in one transaction (all or none); returns their ids in order.
    pub async fn add_triples(&self, triples: &[NewTriple]) -> Result<Vec<String>> {
        let validated: Vec<NewTriple> = triples
            .iter()
            .map(NewTriple::validated)
            .collect::<Result<_>>()?;
        self.ensure_tables().await?;
        let op = "add_triples";
        let mut client = self.client(op).await?;
        let tx = client.transaction().await.map_err(pg(op))?;
        let names: Vec<&str> = validated
            .iter()
            .flat_map(|t| [t.subject.as_str(), t.object.as_str()])
            .collect();
        self.ensure_entities(&tx, &names, op).await?;
        // Facts in one global order, so two batches holding the same facts in other orders
        // wait for each other instead of deadlocking; ids come back in the caller's order.
        let key = |t: &NewTriple| {
            (
                entity_id(&t.subject),
                t.predicate.clone(),
                entity_id(&t.object),
            )
        };
        let mut order: Vec<usize> = (0..validated.len()).collect();
        order.sort_by_key(|&i| key(&validated[i]));
        let mut ids = vec![String::new(); validated.len()];
        for i in order {
            ids[i] = self.insert_triple(&tx, &validated[i], op).await?;
        }
        tx.commit().await.map_err(pg(op))?;
        Ok(ids)
    }

    /// Inserts the entities of these names that are missing (keeping existing display names),
    /// in one statement and in id order, so transactions filing facts about the same new
    /// entities in any order wait for each other instead of deadlocking.
    async fn ensure_entities(
        &self,
        tx: &impl GenericClient,
        names: &[&str],
        op: &'static str,
    ) -> Result<()> {
        let mut entities: Vec<(String, &str)> = names.iter().map(|n| (entity_id(n), *n)).collect();
        entities.sort();
        entities.dedup_by(|a, b| a.0 == b.0);
        let (ids, names): (Vec<String>, Vec<&str>) = entities.into_iter().unzip();
        let stmt = tx
            .prepare_cached(&self.sql(
                "INSERT INTO {s}.entities (id, name)
                 SELECT id, name FROM unnest($1::text[], $2::text[]) AS e(id, name) ORDER BY id
                 ON CONFLICT (id) DO NOTHING",
            ))
            .await
            .map_err(pg(op))?;
        tx.execute(&stmt, &[&ids, &names]).await.map_err(pg(op))?;
        Ok(())
    }

    /// The open fact's id for (subject, predicate, object), if there is one.
    async fn open_fact(
        &self,
        tx: &impl GenericClient,
        spo: [&str; 3],
        op: &'static str,
    ) -> Result<Option<String>> {
        let stmt = tx
            .prepare_cached(&self.sql(
                "SELECT id FROM {s}.triples WHERE subject = $1 AND predicate = $2 AND object = $3
                 AND valid_to IS NULL",
            ))
            .await
            .map_err(pg(op))?;
        let row = tx
            .query_opt(&stmt, &[&spo[0], &spo[1], &spo[2]])
            .await
            .map_err(pg(op))?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Inserts a validated triple (its entities already filed, [`Self::ensure_entities`])
    /// unless the same fact is open; returns its id. As 3.11:
    /// while the same fact is current, adding it again (with any interval) returns the
    /// current one; a writer that loses the race to file it returns the winner's.
    async fn insert_triple(
        &self,
        tx: &impl GenericClient,
        t: &NewTriple,
        op: &'static str,
    ) -> Result<String> {
        let (sub, obj) = (entity_id(&t.subject), entity_id(&t.object));
        let spo = [sub.as_str(), t.predicate.as_str(), obj.as_str()];
        if let Some(id) = self.open_fact(tx, spo, op).await? {
            return Ok(id);
        }
        let id = triple_id(&sub, &t.predicate, &obj, t.valid_from.as_deref());
        let stmt = tx
            .prepare_cached(&self.sql(
                "INSERT INTO {s}.triples (id, subject, predicate, object, valid_from, valid_to,
                     confidence, source_closet, source_file, source_drawer_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                 ON CONFLICT (subject, predicate, object) WHERE valid_to IS NULL DO NOTHING
                 RETURNING id",
            ))
            .await
            .map_err(pg(op))?;
        let inserted = tx
            .query_opt(
                &stmt,
                &[
                    &id,
                    &sub,
                    &t.predicate,
                    &obj,
                    &t.valid_from,
                    &t.valid_to,
                    &t.confidence,
                    &t.source_closet,
                    &t.source_file,
                    &t.source_drawer_id,
                ],
            )
            .await
            .map_err(pg(op))?;
        match inserted {
            Some(row) => Ok(row.get(0)),
            None => self
                .open_fact(tx, spo, op)
                .await?
                .ok_or_else(|| PalaceError::kg(op, "the open fact vanished while filing it")),
        }
    }

    /// Locks the open (subject, predicate, object) facts and closes them at `ended`; errors,
    /// changing nothing, when that would end a fact before it started (`field` names the
    /// argument at fault).
    async fn close_open_facts(
        &self,
        tx: &impl GenericClient,
        spo: [&str; 3],
        ended: &str,
        field: &'static str,
        op: &'static str,
    ) -> Result<u64> {
        let open = tx
            .query(
                &self.sql(
                    "SELECT id, valid_from FROM {s}.triples WHERE subject = $1 AND predicate = $2
                     AND object = $3 AND valid_to IS NULL FOR UPDATE",
                ),
                &[&spo[0], &spo[1], &spo[2]],
            )
            .await
            .map_err(pg(op))?;
        let mut locked: Vec<String> = Vec::with_capacity(open.len());
        for row in &open {
            if let Some(start) = row.get::<_, Option<String>>(1)
                && ends_before_start(&start, ended)
            {
                return Err(PalaceError::invalid(
                    field,
                    format!("{ended} is before the fact's valid_from {start}"),
                ));
            }
            locked.push(row.get(0));
        }
        if locked.is_empty() {
            return Ok(0);
        }
        // Only the facts checked and locked above: one another host opened meanwhile was not
        // checked against `ended`, and stays open (as if it had been filed just after).
        let n = tx
            .execute(
                &self.sql("UPDATE {s}.triples SET valid_to = $2 WHERE id = ANY($1)"),
                &[&locked, &ended],
            )
            .await
            .map_err(pg(op))?;
        Ok(n)
    }

    /// Facts where `id` is the subject (outgoing) or object (incoming), valid at `as_of`; the
    /// entity's side carries `name`, the name asked for (as 3.11 answers).
    async fn entity_facts(
        &self,
        client: &impl GenericClient,
        id: &str,
        name: &str,
        as_of: Option<&str>,
        direction: Direction,
        op: &'static str,
    ) -> Result<Vec<Fact>> {
        let sides: &[(Direction, &str)] = match direction {
            Direction::Outgoing => &[(Direction::Outgoing, "t.subject")],
            Direction::Incoming => &[(Direction::Incoming, "t.object")],
            Direction::Both => &[
                (Direction::Outgoing, "t.subject"),
                (Direction::Incoming, "t.object"),
            ],
        };
        let mut facts = Vec::new();
        for (side, column) in sides {
            let sql = self.sql(&format!(
                "{FACT_SELECT} WHERE {column} = $1 AND {VALID_AT} {CHRONOLOGICAL}"
            ));
            let stmt = client.prepare_cached(&sql).await.map_err(pg(op))?;
            for row in client.query(&stmt, &[&id, &as_of]).await.map_err(pg(op))? {
                let mut fact = fact_from_row(&row, Some(*side));
                match side {
                    Direction::Incoming => fact.object = name.to_string(),
                    _ => fact.subject = name.to_string(),
                }
                facts.push(fact);
            }
        }
        Ok(facts)
    }

    /// 3.11's entity candidates for `name` (id `id`): of the first 5 entities (oldest first)
    /// that are the entity itself, or whose name has `name` as a whole space-separated part or
    /// whose id has the id as a whole `_`-separated part (case-insensitively), the others.
    async fn candidates(
        &self,
        client: &impl GenericClient,
        name: &str,
        id: &str,
        op: &'static str,
    ) -> Result<Vec<EntityCandidate>> {
        let Some([p1, p2, p3, p4, p5, p6]) = candidate_like_patterns(name, id) else {
            return Ok(Vec::new());
        };
        let stmt = client
            .prepare_cached(&self.sql(
                r"SELECT id, name FROM {s}.entities WHERE id = $1 OR name = $2
                    OR name ILIKE $3 ESCAPE '\' OR name ILIKE $4 ESCAPE '\' OR name ILIKE $5 ESCAPE '\'
                    OR id ILIKE $6 ESCAPE '\' OR id ILIKE $7 ESCAPE '\' OR id ILIKE $8 ESCAPE '\'
                 ORDER BY created_at, id LIMIT 5",
            ))
            .await
            .map_err(pg(op))?;
        let rows = client
            .query(&stmt, &[&id, &name, &p1, &p2, &p3, &p4, &p5, &p6])
            .await
            .map_err(pg(op))?;
        // As 3.11 (and the SQLite graph): five rows, then the exact entity left out.
        Ok(rows
            .iter()
            .map(|r| EntityCandidate {
                id: r.get(0),
                name: r.get(1),
            })
            .filter(|c| c.id != id)
            .collect())
    }
}

/// Columns of a fact, with display names joined from `entities`.
const FACT_SELECT: &str =
    "SELECT COALESCE(s.name, t.subject), t.predicate, COALESCE(o.name, t.object),
        t.valid_from, t.valid_to, t.confidence, t.source_closet
    FROM {s}.triples t
    LEFT JOIN {s}.entities s ON s.id = t.subject
    LEFT JOIN {s}.entities o ON o.id = t.object";

/// Validity at `$2`, the as-of instant's start key (NULL: no date restriction): 3.11's filter,
/// a date-only bound compared as its first (valid_from) or last (valid_to) second, half-open at
/// the top; see `mempalace_core::temporal`.
const VALID_AT: &str = "($2::text IS NULL OR (
    (t.valid_from IS NULL OR (CASE WHEN length(t.valid_from) = 10 AND substr(t.valid_from, 5, 1) = '-'
        AND substr(t.valid_from, 8, 1) = '-' THEN t.valid_from || 'T00:00:00Z' ELSE t.valid_from END) <= $2)
    AND (t.valid_to IS NULL OR (CASE WHEN length(t.valid_to) = 10 AND substr(t.valid_to, 5, 1) = '-'
        AND substr(t.valid_to, 8, 1) = '-' THEN t.valid_to || 'T23:59:59Z' ELSE t.valid_to END) > $2)))";

/// Chronological order, undated facts last, then by id (3.11's timeline order).
const CHRONOLOGICAL: &str = "ORDER BY t.valid_from IS NULL, t.valid_from, t.id";

fn fact_from_row(row: &Row, direction: Option<Direction>) -> Fact {
    let valid_to: Option<String> = row.get(4);
    Fact {
        direction,
        subject: row.get(0),
        predicate: row.get(1),
        object: row.get(2),
        valid_from: row.get(3),
        current: valid_to.is_none(),
        valid_to,
        confidence: row.get::<_, Option<f64>>(5).unwrap_or(1.0),
        source_closet: row.get(6),
    }
}

#[async_trait]
impl KnowledgeGraph for PostgresKnowledgeGraph {
    async fn exists(&self) -> Result<bool> {
        self.tables_exist("exists").await
    }

    async fn create_if_missing(&self) -> Result<()> {
        self.ensure_tables().await
    }

    async fn add_entity(&self, entity: &NewEntity) -> Result<String> {
        entity.validate()?;
        self.ensure_tables().await?;
        let id = entity_id(&entity.name);
        let op = "add_entity";
        let client = self.client(op).await?;
        client
            .execute(
                &self.sql(
                    "INSERT INTO {s}.entities (id, name, type, properties) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type,
                         properties = excluded.properties",
                ),
                &[
                    &id,
                    &entity.name.trim(),
                    &entity.entity_type.trim(),
                    &entity.properties.to_string(),
                ],
            )
            .await
            .map_err(pg(op))?;
        Ok(id)
    }

    async fn add_triple(&self, triple: &NewTriple) -> Result<String> {
        let t = triple.validated()?;
        self.ensure_tables().await?;
        let op = "add_triple";
        let mut client = self.client(op).await?;
        let tx = client.transaction().await.map_err(pg(op))?;
        self.ensure_entities(&tx, &[&t.subject, &t.object], op)
            .await?;
        let id = self.insert_triple(&tx, &t, op).await?;
        tx.commit().await.map_err(pg(op))?;
        Ok(id)
    }

    async fn invalidate(
        &self,
        subject: &str,
        predicate: &str,
        object: &str,
        ended: Option<&str>,
    ) -> Result<u64> {
        let ([sub, pred, obj], ended) = invalidation(subject, predicate, object, ended)?;
        let op = "invalidate";
        if !self.tables_exist(op).await? {
            return Ok(0);
        }
        let mut client = self.client(op).await?;
        let tx = client.transaction().await.map_err(pg(op))?;
        let n = self
            .close_open_facts(&tx, [&sub, &pred, &obj], &ended, "ended", op)
            .await?;
        tx.commit().await.map_err(pg(op))?;
        Ok(n)
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
        self.ensure_tables().await?;
        let op = "supersede";
        let mut client = self.client(op).await?;
        let tx = client.transaction().await.map_err(pg(op))?;
        self.ensure_entities(&tx, &[&new.subject, &new.object], op)
            .await?;
        self.close_open_facts(&tx, [&sub, &pred, &old_obj], &at, "at", op)
            .await?;
        let new_triple_id = self.insert_triple(&tx, &new, op).await?;
        tx.commit().await.map_err(pg(op))?;
        Ok(Supersession {
            new_triple_id,
            old_valid_to: at.clone(),
            new_valid_from: at,
        })
    }

    async fn query_entity(
        &self,
        name: &str,
        as_of: Option<&str>,
        direction: Direction,
    ) -> Result<Vec<Fact>> {
        let as_of = as_of_key(as_of)?;
        let name = name.trim();
        let id = entity_id(name);
        let op = "query_entity";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let client = self.client(op).await?;
        let facts = self
            .entity_facts(&client, &id, name, as_of.as_deref(), direction, op)
            .await?;
        if !facts.is_empty() {
            return Ok(facts);
        }
        let known = client
            .query_opt(
                &self.sql("SELECT 1 FROM {s}.entities WHERE id = $1"),
                &[&id],
            )
            .await
            .map_err(pg(op))?
            .is_some();
        if known {
            return Ok(facts);
        }
        // As 3.11: an unknown name that matches exactly one entity by whole words or id parts
        // ("Alice" for "Alice Smith") answers with that entity's facts.
        match self.candidates(&client, name, &id, op).await?.as_slice() {
            [only] => {
                self.entity_facts(
                    &client,
                    &only.id,
                    &only.name,
                    as_of.as_deref(),
                    direction,
                    op,
                )
                .await
            }
            _ => Ok(facts),
        }
    }

    async fn entity_candidates(&self, name: &str) -> Result<Vec<EntityCandidate>> {
        let name = name.trim();
        let op = "entity_candidates";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let client = self.client(op).await?;
        self.candidates(&client, name, &entity_id(name), op).await
    }

    async fn integrity_problems(&self) -> Result<Vec<String>> {
        let op = "integrity_problems";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let client = self.client(op).await?;
        let dangling: i64 = client
            .query_one(
                &self.sql(
                    "SELECT COUNT(*) FROM {s}.triples t WHERE NOT EXISTS \
                     (SELECT 1 FROM {s}.entities e WHERE e.id = t.subject) OR NOT EXISTS \
                     (SELECT 1 FROM {s}.entities e WHERE e.id = t.object)",
                ),
                &[],
            )
            .await
            .map_err(pg(op))?
            .get(0);
        Ok(if dangling > 0 {
            vec![format!(
                "{dangling} fact(s) name an entity that is not stored"
            )]
        } else {
            Vec::new()
        })
    }

    async fn entity_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<EntityRow>> {
        let op = "entity_rows";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let client = self.client(op).await?;
        let rows = client
            .query(
                &self.sql(
                    "SELECT id, name, type, properties, created_at FROM {s}.entities \
                     WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $2",
                ),
                &[&after_id, &(limit as i64)],
            )
            .await
            .map_err(pg(op))?;
        Ok(rows
            .iter()
            .map(|r| EntityRow {
                id: r.get(0),
                name: r.get(1),
                entity_type: r.get(2),
                properties: r.get(3),
                created_at: r.get(4),
            })
            .collect())
    }

    async fn triple_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<TripleRow>> {
        let op = "triple_rows";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let client = self.client(op).await?;
        let rows = client
            .query(
                &self.sql(
                    "SELECT id, subject, predicate, object, valid_from, valid_to, confidence, \
                     source_closet, source_file, source_drawer_id, adapter_name, extracted_at \
                     FROM {s}.triples WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $2",
                ),
                &[&after_id, &(limit as i64)],
            )
            .await
            .map_err(pg(op))?;
        Ok(rows
            .iter()
            .map(|r| TripleRow {
                id: r.get(0),
                subject: r.get(1),
                predicate: r.get(2),
                object: r.get(3),
                valid_from: r.get(4),
                valid_to: r.get(5),
                confidence: r.get(6),
                source_closet: r.get(7),
                source_file: r.get(8),
                source_drawer_id: r.get(9),
                adapter_name: r.get(10),
                extracted_at: r.get(11),
            })
            .collect())
    }

    async fn import_rows(
        &self,
        entities: &[EntityRow],
        triples: &[TripleRow],
    ) -> Result<RowsImported> {
        self.ensure_tables().await?;
        let op = "import_rows";
        let mut client = self.client(op).await?;
        let tx = client.transaction().await.map_err(pg(op))?;
        let referenced: Vec<&str> = triples
            .iter()
            .flat_map(|t| [t.subject.as_str(), t.object.as_str()])
            .collect();
        let stored: std::collections::HashSet<String> = tx
            .query(
                &self.sql("SELECT id FROM {s}.entities WHERE id = ANY($1)"),
                &[&referenced],
            )
            .await
            .map_err(pg(op))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        validate_batch(entities, triples, |id| stored.contains(id))?;
        let mut imported = RowsImported::default();
        let insert = tx
            .prepare(&self.sql(
                "INSERT INTO {s}.entities (id, name, type, properties, created_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            ))
            .await
            .map_err(pg(op))?;
        for e in entities {
            imported.entities += tx
                .execute(
                    &insert,
                    &[&e.id, &e.name, &e.entity_type, &e.properties, &e.created_at],
                )
                .await
                .map_err(pg(op))?;
        }
        // ON CONFLICT without a target also skips a second open copy of one fact (the
        // unique index on open facts), which a SQLite graph may hold.
        let insert = tx
            .prepare(&self.sql(
                "INSERT INTO {s}.triples (id, subject, predicate, object, valid_from, valid_to, \
                 confidence, source_closet, source_file, source_drawer_id, adapter_name, \
                 extracted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
                 ON CONFLICT DO NOTHING",
            ))
            .await
            .map_err(pg(op))?;
        for t in triples {
            imported.triples += tx
                .execute(
                    &insert,
                    &[
                        &t.id,
                        &t.subject,
                        &t.predicate,
                        &t.object,
                        &t.valid_from,
                        &t.valid_to,
                        &t.confidence,
                        &t.source_closet,
                        &t.source_file,
                        &t.source_drawer_id,
                        &t.adapter_name,
                        &t.extracted_at,
                    ],
                )
                .await
                .map_err(pg(op))?;
        }
        tx.commit().await.map_err(pg(op))?;
        Ok(imported)
    }

    async fn query_relationship(&self, predicate: &str, as_of: Option<&str>) -> Result<Vec<Fact>> {
        let as_of = as_of_key(as_of)?;
        let pred = predicate_id(predicate);
        let op = "query_relationship";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let client = self.client(op).await?;
        let stmt = client
            .prepare_cached(&self.sql(&format!(
                "{FACT_SELECT} WHERE t.predicate = $1 AND {VALID_AT} {CHRONOLOGICAL}"
            )))
            .await
            .map_err(pg(op))?;
        let rows = client
            .query(&stmt, &[&pred, &as_of.as_deref()])
            .await
            .map_err(pg(op))?;
        Ok(rows.iter().map(|r| fact_from_row(r, None)).collect())
    }

    async fn timeline(&self, entity: Option<&str>, page: Page) -> Result<Vec<Fact>> {
        let op = "timeline";
        if !self.tables_exist(op).await? {
            return Ok(Vec::new());
        }
        let (limit, offset) = (page.limit as i64, page.offset as i64);
        let client = self.client(op).await?;
        let rows = match entity.map(entity_id) {
            Some(id) => {
                let stmt = client
                    .prepare_cached(&self.sql(&format!(
                        "{FACT_SELECT} WHERE t.subject = $1 OR t.object = $1
                         {CHRONOLOGICAL} LIMIT $2 OFFSET $3"
                    )))
                    .await
                    .map_err(pg(op))?;
                client.query(&stmt, &[&id, &limit, &offset]).await
            }
            None => {
                let stmt = client
                    .prepare_cached(
                        &self.sql(&format!("{FACT_SELECT} {CHRONOLOGICAL} LIMIT $1 OFFSET $2")),
                    )
                    .await
                    .map_err(pg(op))?;
                client.query(&stmt, &[&limit, &offset]).await
            }
        }
        .map_err(pg(op))?;
        Ok(rows.iter().map(|r| fact_from_row(r, None)).collect())
    }

    async fn timeline_total(&self, entity: Option<&str>) -> Result<u64> {
        let op = "timeline_total";
        if !self.tables_exist(op).await? {
            return Ok(0);
        }
        let client = self.client(op).await?;
        let row =
            match entity.map(entity_id) {
                Some(id) => client
                    .query_one(
                        &self.sql(
                            "SELECT COUNT(*) FROM {s}.triples WHERE subject = $1 OR object = $1",
                        ),
                        &[&id],
                    )
                    .await,
                None => {
                    client
                        .query_one(&self.sql("SELECT COUNT(*) FROM {s}.triples"), &[])
                        .await
                }
            }
            .map_err(pg(op))?;
        Ok(row.get::<_, i64>(0).max(0) as u64)
    }

    async fn stats(&self) -> Result<KgStats> {
        let op = "stats";
        if !self.tables_exist(op).await? {
            return Ok(KgStats {
                entities: 0,
                triples: 0,
                current_facts: 0,
                expired_facts: 0,
                relationship_types: Vec::new(),
                predicates: Default::default(),
                current_predicates: Default::default(),
            });
        }
        let mut client = self.client(op).await?;
        // One snapshot: every count sees the same state while other hosts write.
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(pg(op))?;
        let row = tx
            .query_one(
                &self.sql(
                    "SELECT (SELECT COUNT(*) FROM {s}.entities), (SELECT COUNT(*) FROM {s}.triples),
                        (SELECT COUNT(*) FROM {s}.triples WHERE valid_to IS NULL)",
                ),
                &[],
            )
            .await
            .map_err(pg(op))?;
        let count = |i: usize| row.get::<_, i64>(i).max(0) as u64;
        let (entities, triples, current_facts) = (count(0), count(1), count(2));
        // One pass: all facts and the open ones per predicate.
        let rows = tx
            .query(
                &self.sql(
                    "SELECT predicate, COUNT(*), COUNT(*) FILTER (WHERE valid_to IS NULL)
                        FROM {s}.triples GROUP BY predicate ORDER BY predicate",
                ),
                &[],
            )
            .await
            .map_err(pg(op))?;
        let mut predicates = std::collections::BTreeMap::new();
        let mut current_predicates = std::collections::BTreeMap::new();
        for r in &rows {
            let predicate: String = r.get(0);
            let open = r.get::<_, i64>(2).max(0) as u64;
            if open > 0 {
                current_predicates.insert(predicate.clone(), open);
            }
            predicates.insert(predicate, r.get::<_, i64>(1).max(0) as u64);
        }
        tx.commit().await.map_err(pg(op))?;
        Ok(KgStats {
            entities,
            triples,
            current_facts,
            expired_facts: triples.saturating_sub(current_facts),
            relationship_types: predicates.keys().cloned().collect(),
            predicates,
            current_predicates,
        })
    }
}
