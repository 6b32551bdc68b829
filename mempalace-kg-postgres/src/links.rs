//! `PostgresLinks`: tunnels and hallways in the palace's schema, shared by every host.

use async_trait::async_trait;
use chrono::Utc;
use mempalace_core::palace_links::{
    Hallway, NewTunnel, PalaceLinks, RecordEdit, Tunnel, delete_record, hallways_from_records,
    record_tunnel_traversals, require_id, tunnels_from_records, upsert_tunnel_record,
};
use mempalace_core::{PalaceError, Result};
use serde_json::Value;

use crate::PostgresKnowledgeGraph;
use crate::connection::{pg_store, sidecar_error};
use crate::palace_schema::PalaceSchema;

/// Which record list.
#[derive(Clone, Copy)]
enum Kind {
    Tunnels,
    Hallways,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Tunnels => "tunnels",
            Kind::Hallways => "hallways",
        }
    }
}

/// [`PalaceLinks`] in a palace's PostgreSQL schema: each kind's records (3.11's
/// `tunnels.json` list and `hallways.json` `hallways` list) kept whole as JSON text, so
/// fields this port does not know, and the records' order, survive every rewrite.
///
/// Every load → edit → save runs in one transaction holding the kind's row lock
/// (`SELECT … FOR UPDATE`), so hosts editing at once take turns and no edit is lost. Cheap to
/// clone.
#[derive(Clone)]
pub struct PostgresLinks {
    db: PalaceSchema,
}

impl PostgresLinks {
    /// The links of the palace whose graph is `graph` (same server, schema, connections).
    pub fn new(graph: &PostgresKnowledgeGraph) -> Self {
        PostgresLinks {
            db: graph.db.clone(),
        }
    }

    /// The stored records of `kind`; empty when none were ever written.
    async fn read(&self, kind: Kind) -> Result<Vec<Value>> {
        let op = "read links";
        if !self
            .db
            .has_table("link_records", op)
            .await
            .map_err(sidecar_error)?
        {
            return Ok(Vec::new());
        }
        let client = self.db.sidecar_client(op).await?;
        let row = client
            .query_opt(
                &self
                    .db
                    .sql("SELECT records FROM {s}.link_records WHERE kind = $1"),
                &[&kind.key()],
            )
            .await
            .map_err(pg_store(op))?;
        match row {
            Some(row) => parse(kind, &row.get::<_, String>(0)),
            None => Ok(Vec::new()),
        }
    }

    /// One locked load → edit → save; saved only when `edit` says it changed something, and
    /// never when it fails.
    async fn update<T>(
        &self,
        kind: Kind,
        edit: impl FnOnce(&mut Vec<Value>) -> Result<(T, bool)> + Send,
    ) -> Result<T> {
        let op = "update links";
        self.db.ensure_tables().await.map_err(sidecar_error)?;
        let mut client = self.db.sidecar_client(op).await?;
        let tx = client.transaction().await.map_err(pg_store(op))?;
        tx.execute(
            &self.db.sql(
                "INSERT INTO {s}.link_records (kind, records) VALUES ($1, '[]') \
                 ON CONFLICT (kind) DO NOTHING",
            ),
            &[&kind.key()],
        )
        .await
        .map_err(pg_store(op))?;
        let stored: String = tx
            .query_one(
                &self
                    .db
                    .sql("SELECT records FROM {s}.link_records WHERE kind = $1 FOR UPDATE"),
                &[&kind.key()],
            )
            .await
            .map_err(pg_store(op))?
            .get(0);
        let mut records = parse(kind, &stored)?;
        let (out, changed) = edit(&mut records)?;
        if changed {
            let text = serde_json::to_string(&records)
                .map_err(|e| PalaceError::store("postgres", op, e))?;
            tx.execute(
                &self
                    .db
                    .sql("UPDATE {s}.link_records SET records = $2 WHERE kind = $1"),
                &[&kind.key(), &text],
            )
            .await
            .map_err(pg_store(op))?;
        }
        tx.commit().await.map_err(pg_store(op))?;
        Ok(out)
    }
}

/// The record list stored as `text`.
fn parse(kind: Kind, text: &str) -> Result<Vec<Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Array(records)) => Ok(records),
        Ok(_) | Err(_) => Err(PalaceError::store(
            "postgres",
            "read links",
            format!(
                "the stored {} records are not a JSON list; fix the row in link_records",
                kind.key()
            ),
        )),
    }
}

#[async_trait]
impl PalaceLinks for PostgresLinks {
    async fn tunnel_records(&self) -> Result<Vec<Value>> {
        self.read(Kind::Tunnels).await
    }

    async fn hallway_records(&self) -> Result<Vec<Value>> {
        self.read(Kind::Hallways).await
    }

    async fn edit_tunnel_records(&self, edit: RecordEdit) -> Result<()> {
        self.update(Kind::Tunnels, move |records| Ok(((), edit(records))))
            .await
    }

    async fn edit_hallway_records(&self, edit: RecordEdit) -> Result<()> {
        self.update(Kind::Hallways, move |records| Ok(((), edit(records))))
            .await
    }

    async fn upsert_tunnel(&self, tunnel: NewTunnel) -> Result<Tunnel> {
        self.update(Kind::Tunnels, move |records| {
            upsert_tunnel_record(records, &tunnel, Utc::now()).map(|t| (t, true))
        })
        .await
    }

    async fn list_tunnels(&self) -> Result<Vec<Tunnel>> {
        Ok(tunnels_from_records(&self.read(Kind::Tunnels).await?))
    }

    async fn delete_tunnel(&self, tunnel_id: &str) -> Result<bool> {
        require_id(tunnel_id, "tunnel_id")?;
        self.update(Kind::Tunnels, |records| {
            delete_record(records, tunnel_id, "tunnel_id").map(|deleted| (deleted, deleted))
        })
        .await
    }

    async fn record_traversals(&self, tunnel_ids: &[String]) -> Result<usize> {
        if tunnel_ids.iter().all(String::is_empty) {
            return Ok(0);
        }
        self.update(Kind::Tunnels, |records| {
            let touched = record_tunnel_traversals(records, tunnel_ids, Utc::now());
            Ok((touched, touched > 0))
        })
        .await
    }

    async fn list_hallways(&self, wing: Option<&str>) -> Result<Vec<Hallway>> {
        Ok(hallways_from_records(
            &self.read(Kind::Hallways).await?,
            wing,
        ))
    }

    async fn delete_hallway(&self, hallway_id: &str) -> Result<bool> {
        require_id(hallway_id, "hallway_id")?;
        self.update(Kind::Hallways, |records| {
            delete_record(records, hallway_id, "hallway_id").map(|deleted| (deleted, deleted))
        })
        .await
    }
}
