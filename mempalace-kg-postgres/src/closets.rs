//! `PostgresClosets`: the closet index in the palace's schema, shared by every host.

use async_trait::async_trait;
use mempalace_core::Result;
use mempalace_core::closets::{
    Closet, ClosetIndex, ClosetMove, ClosetScope, MIN_CLOSET_WORD_CHARS,
};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::PostgresKnowledgeGraph;
use crate::connection::{pg_store, sidecar_error};
use crate::palace_schema::PalaceSchema;

/// [`ClosetIndex`] in a palace's PostgreSQL schema. Words match anywhere in a closet's text,
/// whatever the case (Unicode lower-casing done here, not by the server's locale); an unscoped
/// search ranks closets matching more of the words first, then by filing order. Cheap to
/// clone.
#[derive(Clone)]
pub struct PostgresClosets {
    db: PalaceSchema,
}

impl PostgresClosets {
    /// The closets of the palace whose graph is `graph` (same server, schema, connections).
    pub fn new(graph: &PostgresKnowledgeGraph) -> Self {
        PostgresClosets {
            db: graph.db.clone(),
        }
    }

    /// Whether the closets table exists (reads of a palace without closets create nothing).
    async fn exists(&self, operation: &'static str) -> Result<bool> {
        self.db
            .has_table("closets", operation)
            .await
            .map_err(sidecar_error)
    }

    /// Files `closets` in one transaction; `replace` overwrites stored ids, else they stay.
    async fn put(&self, closets: &[Closet], replace: bool, op: &'static str) -> Result<usize> {
        if closets.is_empty() {
            return Ok(0);
        }
        self.db.ensure_tables().await.map_err(sidecar_error)?;
        let mut client = self.db.sidecar_client(op).await?;
        let tx = client.transaction().await.map_err(pg_store(op))?;
        let on_conflict = if replace {
            "ON CONFLICT (id) DO UPDATE SET text = excluded.text, folded = excluded.folded, \
             wing = excluded.wing, room = excluded.room, source_file = excluded.source_file"
        } else {
            "ON CONFLICT (id) DO NOTHING"
        };
        let stmt = tx
            .prepare(&self.db.sql(&format!(
                "INSERT INTO {{s}}.closets (id, text, folded, wing, room, source_file) \
                 VALUES ($1, $2, $3, $4, $5, $6) {on_conflict}"
            )))
            .await
            .map_err(pg_store(op))?;
        // Batches take turns (filing order is the order given, and two batches sharing ids
        // in other orders must not deadlock).
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))",
            &[&format!("mempalace-closets:{}", self.db.schema.as_str())],
        )
        .await
        .map_err(pg_store(op))?;
        let mut written = 0;
        for c in closets {
            let folded = c.text.to_lowercase();
            written += tx
                .execute(
                    &stmt,
                    &[&c.id, &c.text, &folded, &c.wing, &c.room, &c.source_file],
                )
                .await
                .map_err(pg_store(op))? as usize;
        }
        tx.commit().await.map_err(pg_store(op))?;
        Ok(written)
    }
}

fn closet_from_row(r: &Row) -> Closet {
    Closet {
        id: r.get(0),
        text: r.get(1),
        wing: r.get(2),
        room: r.get(3),
        source_file: r.get(4),
    }
}

#[async_trait]
impl ClosetIndex for PostgresClosets {
    fn backend_name(&self) -> &'static str {
        "postgres"
    }

    async fn upsert(&self, closets: &[Closet]) -> Result<()> {
        self.put(closets, true, "upsert closets").await.map(drop)
    }

    async fn insert_missing(&self, closets: &[Closet]) -> Result<usize> {
        self.put(closets, false, "insert closets").await
    }

    async fn containing_any(
        &self,
        words: &[String],
        scope: &ClosetScope,
        cap: usize,
    ) -> Result<Vec<Closet>> {
        let op = "search closets";
        let words: Vec<String> = words
            .iter()
            .map(|w| w.to_lowercase())
            .filter(|w| w.chars().count() >= MIN_CLOSET_WORD_CHARS)
            .collect();
        if words.is_empty() || !self.exists(op).await? {
            return Ok(Vec::new());
        }
        let client = self.db.sidecar_client(op).await?;
        let mut values: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(words)];
        let mut sql = String::from(
            "SELECT c.seq, c.id, c.text, c.wing, c.room, c.source_file, \
             (SELECT COUNT(*) FROM unnest($1::text[]) w WHERE strpos(c.folded, w) > 0) AS hits \
             FROM {s}.closets c WHERE true",
        );
        for (column, value) in [
            ("wing", &scope.wing),
            ("room", &scope.room),
            ("source_file", &scope.source_file),
        ] {
            if let Some(v) = value {
                values.push(Box::new(v.clone()));
                sql.push_str(&format!(" AND c.{column} = ${}", values.len()));
            }
        }
        let mut sql =
            format!("SELECT id, text, wing, room, source_file FROM ({sql}) m WHERE hits > 0");
        if scope.is_everything() {
            values.push(Box::new(i64::try_from(cap).unwrap_or(i64::MAX)));
            sql.push_str(&format!(" ORDER BY hits DESC, seq LIMIT ${}", values.len()));
        } else {
            sql.push_str(" ORDER BY seq");
        }
        let params: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect();
        Ok(client
            .query(&self.db.sql(&sql), &params)
            .await
            .map_err(pg_store(op))?
            .iter()
            .map(closet_from_row)
            .collect())
    }

    async fn delete_for_sources(&self, sources: &[String]) -> Result<usize> {
        let op = "delete closets";
        if sources.is_empty() || !self.exists(op).await? {
            return Ok(0);
        }
        let client = self.db.sidecar_client(op).await?;
        let deleted = client
            .execute(
                &self
                    .db
                    .sql("DELETE FROM {s}.closets WHERE source_file = ANY($1)"),
                &[&sources],
            )
            .await
            .map_err(pg_store(op))?;
        Ok(deleted as usize)
    }

    async fn relocate_sources(&self, moves: &[ClosetMove]) -> Result<usize> {
        let op = "relocate closets";
        if moves.is_empty() || !self.exists(op).await? {
            return Ok(0);
        }
        let mut client = self.db.sidecar_client(op).await?;
        let tx = client.transaction().await.map_err(pg_store(op))?;
        let stmt = tx
            .prepare(&self.db.sql(
                "UPDATE {s}.closets SET wing = $3, room = COALESCE($5, room) \
                 WHERE source_file = $1 AND wing = $2 AND ($4::text IS NULL OR room = $4)",
            ))
            .await
            .map_err(pg_store(op))?;
        let mut moved = 0;
        for m in moves {
            moved += tx
                .execute(
                    &stmt,
                    &[&m.source_file, &m.from_wing, &m.wing, &m.from_room, &m.room],
                )
                .await
                .map_err(pg_store(op))? as usize;
        }
        tx.commit().await.map_err(pg_store(op))?;
        Ok(moved)
    }

    async fn count(&self) -> Result<u64> {
        let op = "count closets";
        if !self.exists(op).await? {
            return Ok(0);
        }
        let client = self.db.sidecar_client(op).await?;
        let n: i64 = client
            .query_one(&self.db.sql("SELECT COUNT(*) FROM {s}.closets"), &[])
            .await
            .map_err(pg_store(op))?
            .get(0);
        Ok(n as u64)
    }

    async fn closet_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Closet>> {
        let op = "closet rows";
        if !self.exists(op).await? {
            return Ok(Vec::new());
        }
        let client = self.db.sidecar_client(op).await?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(client
            .query(
                &self.db.sql(
                    "SELECT id, text, wing, room, source_file FROM {s}.closets \
                     WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $2",
                ),
                &[&after_id, &limit],
            )
            .await
            .map_err(pg_store(op))?
            .iter()
            .map(closet_from_row)
            .collect())
    }
}
