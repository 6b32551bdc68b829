//! One palace's schema on the server, shared by every adapter of the palace (graph,
//! coordination log, links, closets, write lock): the connection pool, the tables' creation,
//! and the check that the schema belongs to this palace.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use deadpool_postgres::{GenericClient, Pool};
use mempalace_core::{PalaceError, Result};

use crate::connection::{PostgresTls, pg, pool, with_causes};
use crate::schema::{LAST_SCHEMA_OBJECT, SchemaName, create_schema_sql};

/// A palace's schema and the pool that reaches it. Cheap to clone (clones share the pool).
#[derive(Clone)]
pub(crate) struct PalaceSchema {
    pub(crate) pool: Pool,
    pub(crate) url: Arc<str>,
    pub(crate) tls: PostgresTls,
    pub(crate) schema: SchemaName,
    owner: Option<String>,
    /// The tables were made (or found complete) and the owner claimed, by this process.
    created: Arc<AtomicBool>,
    /// Tables seen to exist (owner checked, read-only).
    seen: Arc<Mutex<HashSet<&'static str>>>,
}

impl PalaceSchema {
    /// The schema `schema` of the server at `url`; nothing is connected until the first call.
    pub(crate) fn connect(url: &str, schema: SchemaName, tls: PostgresTls) -> Result<Self> {
        Ok(PalaceSchema {
            pool: pool(url, &tls)?,
            url: Arc::from(url),
            tls,
            schema,
            owner: None,
            created: Default::default(),
            seen: Default::default(),
        })
    }

    /// Checks that the schema belongs to the palace `palace_id` (see
    /// [`crate::PostgresKnowledgeGraph::with_owner`]).
    pub(crate) fn with_owner(mut self, palace_id: impl Into<String>) -> Self {
        self.owner = Some(palace_id.into()).filter(|o| !o.is_empty());
        self
    }

    /// Records this palace as the schema's owner if it has none, and refuses another's.
    async fn check_owner(
        &self,
        client: &impl GenericClient,
        operation: &'static str,
    ) -> Result<()> {
        let Some(owner) = &self.owner else {
            return Ok(());
        };
        client
            .execute(
                &self.sql("INSERT INTO {s}.palace_owner (palace_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM {s}.palace_owner) ON CONFLICT DO NOTHING"),
                &[owner],
            )
            .await
            .map_err(pg(operation))?;
        let recorded = self.recorded_owners(client, operation).await?;
        self.refuse_unless_mine(&recorded, owner, operation)
    }

    /// Errors when the schema records an owner other than this palace (read-only: a schema
    /// without an owner table or row passes).
    async fn refuse_other_owner(
        &self,
        client: &impl GenericClient,
        operation: &'static str,
    ) -> Result<()> {
        let Some(owner) = &self.owner else {
            return Ok(());
        };
        if !self.table_exists(client, "palace_owner", operation).await? {
            return Ok(());
        }
        let recorded = self.recorded_owners(client, operation).await?;
        self.refuse_unless_mine(&recorded, owner, operation)
    }

    /// The palaces the schema records as its owner.
    async fn recorded_owners(
        &self,
        client: &impl GenericClient,
        operation: &'static str,
    ) -> Result<Vec<String>> {
        Ok(client
            .query(&self.sql("SELECT palace_id FROM {s}.palace_owner"), &[])
            .await
            .map_err(pg(operation))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// Whether the schema has the table `table`.
    async fn table_exists(
        &self,
        client: &impl GenericClient,
        table: &str,
        operation: &'static str,
    ) -> Result<bool> {
        Ok(client
            .query_one(
                "SELECT to_regclass($1) IS NOT NULL",
                &[&format!("{}.{table}", self.schema.quoted())],
            )
            .await
            .map_err(pg(operation))?
            .get(0))
    }

    /// The error for a schema owned by another palace.
    fn refuse_unless_mine(
        &self,
        recorded: &[String],
        owner: &str,
        operation: &'static str,
    ) -> Result<()> {
        if recorded.iter().any(|r| r != owner) {
            return Err(PalaceError::kg(
                operation,
                format!(
                    "PostgreSQL schema {} belongs to another palace ({}), not to this one ({owner}); \
                     each palace keeps its graph in a schema of its own",
                    self.schema.as_str(),
                    recorded.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// A pooled connection.
    pub(crate) async fn client(
        &self,
        operation: &'static str,
    ) -> Result<deadpool_postgres::Object> {
        self.pool.get().await.map_err(|e| {
            PalaceError::kg(
                operation,
                format!("connecting to PostgreSQL: {}", with_causes(&e)),
            )
        })
    }

    /// A pooled connection for a sidecar (its failure a storage error, not a graph error).
    pub(crate) async fn sidecar_client(
        &self,
        operation: &'static str,
    ) -> Result<deadpool_postgres::Object> {
        self.pool
            .get()
            .await
            .map_err(|e| crate::connection::no_connection(operation, e))
    }

    /// Whether the table `table` (one of the palace's) exists (remembered once it does); the
    /// owner is checked, never claimed.
    pub(crate) async fn has_table(
        &self,
        table: &'static str,
        operation: &'static str,
    ) -> Result<bool> {
        if self.created.load(Ordering::Acquire)
            || self
                .seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(table)
        {
            return Ok(true);
        }
        let client = self.client(operation).await?;
        let exists = self.table_exists(&client, table, operation).await?;
        if exists {
            self.refuse_other_owner(&client, operation).await?;
            self.seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(table);
        }
        Ok(exists)
    }

    /// Creates the schema and every table if missing (a schema made by an earlier release
    /// gains the tables added since); concurrent creators (other hosts) take turns on an
    /// advisory lock, so none fails on another's half-made schema.
    pub(crate) async fn ensure_tables(&self) -> Result<()> {
        if self.created.load(Ordering::Acquire) {
            return Ok(());
        }
        let op = "create";
        let mut client = self.client(op).await?;
        // A schema that has every object (the script's last one exists) is only checked: the
        // script's CREATE INDEX IF NOT EXISTS would lock each table on every process's start.
        if self.table_exists(&client, LAST_SCHEMA_OBJECT, op).await? {
            self.check_owner(&client, op).await?;
            self.created.store(true, Ordering::Release);
            return Ok(());
        }
        let tx = client.transaction().await.map_err(pg(op))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1))",
            &[&format!("mempalace-kg:{}", self.schema.as_str())],
        )
        .await
        .map_err(pg(op))?;
        tx.batch_execute(&create_schema_sql(&self.schema.quoted()))
            .await
            .map_err(pg(op))?;
        self.check_owner(&tx, op).await?;
        tx.commit().await.map_err(pg(op))?;
        self.created.store(true, Ordering::Release);
        Ok(())
    }

    /// `sql` with `{s}` replaced by the quoted schema.
    pub(crate) fn sql(&self, sql: &str) -> String {
        sql.replace("{s}", &self.schema.quoted())
    }
}
