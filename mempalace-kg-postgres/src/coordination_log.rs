//! `PostgresCoordinationLog`: the coordination log in the palace's schema, shared by every
//! host of a fleet, with appends announced by `NOTIFY` so waiters on any host wake at once.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use mempalace_core::Result;
use mempalace_core::coordination::{
    Artifact, CoordinationLog, Event, EventFilter, Order, PreparedArtifact, PreparedEvent,
    author_position_taken, exported_metadata_json, next_hlc, parse_metadata, unknown_anchor,
    unknown_artifact, validate_exported_artifact, validate_exported_event,
};
use tokio::sync::watch;
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, Row};

use crate::PostgresKnowledgeGraph;
use crate::connection::{config, pg_store, sidecar_error};
use crate::palace_schema::PalaceSchema;

const EVENT_COLUMNS: &str = "seq, id, origin_replica, origin_seq, hlc, type, stream, room, \
     topic, from_agent, to_agent, correlation_id, branch, base_commit, status, body, created_at, \
     metadata_json";

const ARTIFACT_COLUMNS: &str =
    "id, kind, sha256, size_bytes, content, created_by, created_at, origin_replica, metadata_json";

/// How long the listener first waits before reconnecting after its connection is lost; the
/// wait doubles while it keeps failing, up to [`LISTENER_RETRY_MAX`].
const LISTENER_RETRY: Duration = Duration::from_secs(1);
/// The longest wait between the listener's reconnections.
const LISTENER_RETRY_MAX: Duration = Duration::from_secs(30);

/// The coordination log (events, tasks, artifacts, acks) in a palace's PostgreSQL schema:
/// every host of the fleet appends to and reads the same log.
///
/// Appends are serialised by a transaction-scoped advisory lock, so `seq` (the append
/// position) follows commit order on every host and a reader's cursor never skips an event
/// that commits later; each append's clock stamp (`hlc`, 3.11's format) is later than every
/// stored one, and `origin_seq` counts each author replica's own appends. Each append
/// sends a `NOTIFY` on the schema's channel: [`CoordinationLog::append_signal`] listens on it,
/// so an `event_wait` on one host wakes when another host appends. Cheap to clone.
#[derive(Clone)]
pub struct PostgresCoordinationLog {
    db: PalaceSchema,
    replica: Arc<ReplicaId>,
    signal: Arc<Mutex<Option<Arc<watch::Sender<u64>>>>>,
}

/// Where the replica id comes from: given, or found (e.g. minted into a file) on first use.
type FindReplica = Box<dyn Fn() -> Result<String> + Send + Sync>;

/// This host's replica id, resolved once.
struct ReplicaId {
    id: std::sync::OnceLock<Arc<str>>,
    find: Option<FindReplica>,
}

impl ReplicaId {
    fn get(&self) -> Result<Arc<str>> {
        if let Some(id) = self.id.get() {
            return Ok(Arc::clone(id));
        }
        let found: Arc<str> = match &self.find {
            Some(find) => Arc::from(find()?),
            None => Arc::from(""),
        };
        Ok(Arc::clone(self.id.get_or_init(|| found)))
    }
}

impl PostgresCoordinationLog {
    /// The log of the palace whose graph is `graph` (same server, schema and connections);
    /// events appended here carry `replica` (this host's replica id) as their author.
    pub fn new(graph: &PostgresKnowledgeGraph, replica: impl Into<String>) -> Self {
        let id = std::sync::OnceLock::new();
        let _ = id.set(Arc::from(replica.into()));
        Self::with_replica(graph, ReplicaId { id, find: None })
    }

    /// Like [`PostgresCoordinationLog::new`], the replica id found by `find` on the first
    /// write (e.g. read or minted in the host's palace folder, which a read must not create).
    pub fn with_replica_from(
        graph: &PostgresKnowledgeGraph,
        find: impl Fn() -> Result<String> + Send + Sync + 'static,
    ) -> Self {
        Self::with_replica(
            graph,
            ReplicaId {
                id: std::sync::OnceLock::new(),
                find: Some(Box::new(find)),
            },
        )
    }

    fn with_replica(graph: &PostgresKnowledgeGraph, replica: ReplicaId) -> Self {
        PostgresCoordinationLog {
            db: graph.db.clone(),
            replica: Arc::new(replica),
            signal: Default::default(),
        }
    }

    /// Whether the log's tables exist (reads of a palace that never wrote create nothing).
    async fn exists(&self, operation: &'static str) -> Result<bool> {
        self.db
            .has_table("events", operation)
            .await
            .map_err(sidecar_error)
    }

    /// The key of the advisory lock that serialises appends.
    fn append_lock_key(&self) -> String {
        format!("mempalace-log:{}", self.db.schema.as_str())
    }

    /// The channel appends are announced on (the schema's name).
    fn channel(&self) -> &str {
        self.db.schema.as_str()
    }

    /// Takes the append lock inside `tx` and announces the append (delivered at commit).
    async fn begin_append(&self, tx: &impl GenericClient, operation: &'static str) -> Result<()> {
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext($1)), pg_notify($2, '')",
            &[&self.append_lock_key(), &self.channel()],
        )
        .await
        .map_err(pg_store(operation))?;
        Ok(())
    }

    /// Stores `event` as it is (`seq` aside: the row's is returned), its metadata as
    /// `metadata_json`; inside an append transaction.
    async fn insert_row(
        &self,
        tx: &impl GenericClient,
        event: &Event,
        metadata_json: &str,
        operation: &'static str,
    ) -> Result<i64> {
        Ok(tx
            .query_one(
                &self.db.sql(
                    "INSERT INTO {s}.events (id, type, stream, room, topic, from_agent, to_agent, \
                     correlation_id, branch, base_commit, status, body, created_at, metadata_json, \
                     origin_replica, origin_seq, hlc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
                     $10, $11, $12, $13, $14, $15, $16, $17) RETURNING seq",
                ),
                &[
                    &event.id,
                    &event.event_type,
                    &event.stream,
                    &event.room,
                    &event.topic,
                    &event.from_agent,
                    &event.to_agent,
                    &event.correlation_id,
                    &event.branch,
                    &event.base_commit,
                    &event.status,
                    &event.body,
                    &event.created_at,
                    &metadata_json,
                    &event.origin_replica,
                    &event.origin_seq,
                    &event.hlc,
                ],
            )
            .await
            .map_err(pg_store(operation))?
            .get(0))
    }

    /// Errors with [`unknown_artifact`] for the first of `ids` not stored.
    async fn require_artifacts(
        &self,
        tx: &impl GenericClient,
        ids: &[String],
        operation: &'static str,
    ) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let found: Vec<String> = tx
            .query(
                &self
                    .db
                    .sql("SELECT id FROM {s}.artifacts WHERE id = ANY($1)"),
                &[&ids],
            )
            .await
            .map_err(pg_store(operation))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        match ids.iter().find(|id| !found.contains(id)) {
            Some(missing) => Err(unknown_artifact(missing)),
            None => Ok(()),
        }
    }

    /// Links an event to its artifacts.
    async fn link_artifacts(
        &self,
        tx: &impl GenericClient,
        event_id: &str,
        ids: &[String],
        operation: &'static str,
    ) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        tx.execute(
            &self.db.sql(
                "INSERT INTO {s}.event_artifacts (event_id, artifact_id) \
                 SELECT $1, a FROM unnest($2::text[]) AS a ON CONFLICT DO NOTHING",
            ),
            &[&event_id, &ids],
        )
        .await
        .map_err(pg_store(operation))?;
        Ok(())
    }

    /// Fills `artifact_ids` (sorted, as 3.11 reads them).
    async fn attach_artifact_ids(
        &self,
        client: &impl GenericClient,
        events: &mut [Event],
        operation: &'static str,
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = events.iter().map(|e| e.id.as_str()).collect();
        let rows = client
            .query(
                &self.db.sql(
                    "SELECT event_id, artifact_id FROM {s}.event_artifacts \
                     WHERE event_id = ANY($1) ORDER BY artifact_id",
                ),
                &[&ids],
            )
            .await
            .map_err(pg_store(operation))?;
        for row in rows {
            let (event_id, artifact_id): (String, String) = (row.get(0), row.get(1));
            if let Some(e) = events.iter_mut().find(|e| e.id == event_id) {
                e.artifact_ids.push(artifact_id);
            }
        }
        Ok(())
    }

    /// The append position of the event `id`, for a cursor; [`unknown_anchor`] when absent.
    async fn anchor(
        &self,
        client: &impl GenericClient,
        id: &Option<String>,
        field: &'static str,
    ) -> Result<Option<i64>> {
        let Some(id) = id else { return Ok(None) };
        client
            .query_opt(
                &self.db.sql("SELECT seq FROM {s}.events WHERE id = $1"),
                &[id],
            )
            .await
            .map_err(pg_store("list_events"))?
            .map(|r| Some(r.get(0)))
            .ok_or_else(|| unknown_anchor(field, id))
    }

    /// Starts the listener for this log's channel (once), returning its signal.
    fn listener(&self) -> Option<Arc<watch::Sender<u64>>> {
        let mut slot = self.signal.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(sender) = slot.as_ref() {
            return Some(Arc::clone(sender));
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let sender = Arc::new(watch::Sender::new(0u64));
        let config = config(&self.db.url).ok()?;
        let tls = self.db.tls.connector().ok()?;
        let channel = format!("\"{}\"", self.channel());
        runtime.spawn(listen(config, tls, channel, Arc::downgrade(&sender)));
        *slot = Some(Arc::clone(&sender));
        Some(sender)
    }
}

/// Keeps a connection that `LISTEN`s on `channel` and bumps the signal on every notification
/// (and after every reconnection, since appends may have been missed meanwhile), until the
/// log that owns the signal is gone.
async fn listen(
    config: tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    channel: String,
    signal: Weak<watch::Sender<u64>>,
) {
    let bump = |signal: &Weak<watch::Sender<u64>>| match signal.upgrade() {
        Some(sender) => {
            sender.send_modify(|n| *n = n.wrapping_add(1));
            true
        }
        None => false,
    };
    let mut retry = LISTENER_RETRY;
    loop {
        if signal.strong_count() == 0 {
            return;
        }
        match config.connect(tls.clone()).await {
            Ok((client, mut connection)) => {
                let statement = format!("LISTEN {channel}");
                let listening = client.batch_execute(&statement);
                let mut listening = std::pin::pin!(listening);
                let mut subscribed = false;
                loop {
                    tokio::select! {
                        done = &mut listening, if !subscribed => {
                            if let Err(e) = done {
                                tracing::warn!(error = %e, "coordination log: LISTEN failed");
                                break;
                            }
                            subscribed = true;
                            retry = LISTENER_RETRY;
                            if !bump(&signal) {
                                return;
                            }
                        }
                        message = std::future::poll_fn(|cx| connection.poll_message(cx)) => {
                            match message {
                                Some(Ok(AsyncMessage::Notification(_))) => {
                                    if !bump(&signal) {
                                        return;
                                    }
                                }
                                Some(Ok(_)) => {}
                                Some(Err(e)) => {
                                    tracing::warn!(error = %e, "coordination log: listener connection lost");
                                    break;
                                }
                                None => break,
                            }
                        }
                        () = tokio::time::sleep(Duration::from_secs(5)) => {
                            if signal.strong_count() == 0 {
                                return;
                            }
                        }
                    }
                }
            }
            Err(e) => tracing::debug!(error = %e, "coordination log: listener cannot connect"),
        }
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(LISTENER_RETRY_MAX);
    }
}

fn event_from_row(row: &Row) -> Event {
    let metadata: String = row.get(17);
    Event {
        seq: row.get(0),
        id: row.get(1),
        origin_replica: row.get(2),
        origin_seq: row.get(3),
        hlc: row.get(4),
        event_type: row.get(5),
        stream: row.get(6),
        room: row.get(7),
        topic: row.get(8),
        from_agent: row.get(9),
        to_agent: row.get(10),
        correlation_id: row.get(11),
        branch: row.get(12),
        base_commit: row.get(13),
        status: row.get(14),
        artifact_ids: Vec::new(),
        body: row.get(15),
        created_at: row.get(16),
        metadata: parse_metadata(&metadata),
        body_truncated: None,
        body_length: None,
    }
}

fn artifact_from_row(row: &Row) -> Artifact {
    let metadata: String = row.get(8);
    Artifact {
        id: row.get(0),
        kind: row.get(1),
        sha256: row.get(2),
        size_bytes: row.get(3),
        content: row.get(4),
        created_by: row.get(5),
        created_at: row.get(6),
        origin_replica: row.get(7),
        metadata: parse_metadata(&metadata),
    }
}

#[async_trait]
impl CoordinationLog for PostgresCoordinationLog {
    async fn insert_event(&self, event: PreparedEvent) -> Result<Event> {
        let op = "insert_event";
        // Found (perhaps minted in a file) before the fleet-wide append lock is taken.
        let replica_id = self.replica.get()?;
        self.db.ensure_tables().await.map_err(sidecar_error)?;
        let mut client = self.db.sidecar_client(op).await?;
        let tx = client.transaction().await.map_err(pg_store(op))?;
        self.begin_append(&tx, op).await?;
        self.require_artifacts(&tx, &event.artifact_ids, op).await?;
        let last: Option<String> = tx
            .query_one(&self.db.sql("SELECT max(hlc) FROM {s}.events"), &[])
            .await
            .map_err(pg_store(op))?
            .get(0);
        let hlc = next_hlc(last.as_deref(), &replica_id);
        // The author's own sequence (3.11's origin_seq): this replica's next number, so events
        // imported from a host's earlier log keep theirs and never clash with new ones.
        let replica: &str = &replica_id;
        let origin_seq: i64 = tx
            .query_one(
                &self.db.sql(
                    "SELECT COALESCE(max(origin_seq), 0) + 1 FROM {s}.events \
                     WHERE origin_replica = $1",
                ),
                &[&replica],
            )
            .await
            .map_err(pg_store(op))?
            .get(0);
        let metadata_json = event.metadata_json.clone();
        let mut stored =
            event.into_event(0, Some(replica.to_string()), Some(origin_seq), Some(hlc));
        stored.seq = self.insert_row(&tx, &stored, &metadata_json, op).await?;
        self.link_artifacts(&tx, &stored.id, &stored.artifact_ids, op)
            .await?;
        tx.commit().await.map_err(pg_store(op))?;
        Ok(stored)
    }

    async fn list_events(&self, filter: &EventFilter) -> Result<Vec<Event>> {
        let op = "list_events";
        if !self.exists(op).await? {
            // As the SQLite log: a log never written answers nothing, whatever the query.
            return Ok(Vec::new());
        }
        let client = self.db.sidecar_client(op).await?;
        let mut clauses: Vec<String> = Vec::new();
        let mut values: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        let mut push = |clause: &str, value: Box<dyn ToSql + Sync + Send>| {
            values.push(value);
            clauses.push(clause.replace('?', &format!("${}", values.len())));
        };
        for (column, value) in [
            ("stream", &filter.stream),
            ("room", &filter.room),
            ("topic", &filter.topic),
            ("type", &filter.event_type),
            ("from_agent", &filter.from_agent),
            ("correlation_id", &filter.correlation_id),
            ("status", &filter.status),
        ] {
            if let Some(v) = value {
                push(&format!("{column} = ?"), Box::new(v.clone()));
            }
        }
        if let Some(v) = &filter.to_agent {
            push("(to_agent = ? OR to_agent = '*')", Box::new(v.clone()));
        }
        if let Some(v) = &filter.since_created_at {
            push("created_at >= ?", Box::new(v.clone()));
        }
        if let Some(seq) = self
            .anchor(&client, &filter.since_event_id, "since_event_id")
            .await?
        {
            push("seq > ?", Box::new(seq));
        }
        if let Some(seq) = self
            .anchor(&client, &filter.before_event_id, "before_event_id")
            .await?
        {
            push("seq < ?", Box::new(seq));
        }
        let mut query = self
            .db
            .sql(&format!("SELECT {EVENT_COLUMNS} FROM {{s}}.events"));
        if !clauses.is_empty() {
            query.push_str(" WHERE ");
            query.push_str(&clauses.join(" AND "));
        }
        let order = match filter.order {
            Order::Asc => "ASC",
            Order::Desc => "DESC",
        };
        values.push(Box::new(i64::try_from(filter.limit).unwrap_or(i64::MAX)));
        query.push_str(&format!(" ORDER BY seq {order} LIMIT ${}", values.len()));
        let params: Vec<&(dyn ToSql + Sync)> = values
            .iter()
            .map(|v| v.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let mut events: Vec<Event> = client
            .query(&query, &params)
            .await
            .map_err(pg_store(op))?
            .iter()
            .map(event_from_row)
            .collect();
        self.attach_artifact_ids(&client, &mut events, op).await?;
        Ok(events)
    }

    async fn get_event(&self, id: &str) -> Result<Option<Event>> {
        let op = "get_event";
        if !self.exists(op).await? {
            return Ok(None);
        }
        let client = self.db.sidecar_client(op).await?;
        let mut events: Vec<Event> = client
            .query(
                &self.db.sql(&format!(
                    "SELECT {EVENT_COLUMNS} FROM {{s}}.events WHERE id = $1"
                )),
                &[&id],
            )
            .await
            .map_err(pg_store(op))?
            .iter()
            .map(event_from_row)
            .collect();
        self.attach_artifact_ids(&client, &mut events, op).await?;
        Ok(events.pop())
    }

    async fn insert_artifact(&self, artifact: PreparedArtifact) -> Result<Artifact> {
        let op = "insert_artifact";
        self.db.ensure_tables().await.map_err(sidecar_error)?;
        let replica_id = self.replica.get()?;
        let replica: &str = &replica_id;
        let client = self.db.sidecar_client(op).await?;
        client
            .execute(
                &self.db.sql(
                    "INSERT INTO {s}.artifacts (id, kind, sha256, size_bytes, content, created_by, \
                     created_at, metadata_json, origin_replica) VALUES ($1, $2, $3, $4, $5, $6, \
                     $7, $8, $9)",
                ),
                &[
                    &artifact.id,
                    &artifact.kind,
                    &artifact.sha256,
                    &artifact.size_bytes,
                    &artifact.content,
                    &artifact.created_by,
                    &artifact.created_at,
                    &artifact.metadata_json,
                    &replica,
                ],
            )
            .await
            .map_err(pg_store(op))?;
        Ok(artifact.into_artifact(Some(replica_id.to_string())))
    }

    async fn get_artifact(&self, id: &str) -> Result<Option<Artifact>> {
        let op = "get_artifact";
        if !self.exists(op).await? {
            return Ok(None);
        }
        let client = self.db.sidecar_client(op).await?;
        Ok(client
            .query_opt(
                &self.db.sql(&format!(
                    "SELECT {ARTIFACT_COLUMNS} FROM {{s}}.artifacts WHERE id = $1"
                )),
                &[&id],
            )
            .await
            .map_err(pg_store(op))?
            .as_ref()
            .map(artifact_from_row))
    }

    async fn artifact_rows(&self, after_id: Option<&str>, limit: usize) -> Result<Vec<Artifact>> {
        let op = "artifact_rows";
        if !self.exists(op).await? {
            return Ok(Vec::new());
        }
        let client = self.db.sidecar_client(op).await?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(client
            .query(
                &self.db.sql(&format!(
                    "SELECT {ARTIFACT_COLUMNS} FROM {{s}}.artifacts \
                     WHERE $1::text IS NULL OR id > $1 ORDER BY id LIMIT $2"
                )),
                &[&after_id, &limit],
            )
            .await
            .map_err(pg_store(op))?
            .iter()
            .map(artifact_from_row)
            .collect())
    }

    async fn import_event(&self, event: &Event) -> Result<bool> {
        validate_exported_event(event)?;
        let op = "import_event";
        self.db.ensure_tables().await.map_err(sidecar_error)?;
        let mut client = self.db.sidecar_client(op).await?;
        let tx = client.transaction().await.map_err(pg_store(op))?;
        self.begin_append(&tx, op).await?;
        let present = tx
            .query_opt(
                &self.db.sql("SELECT 1 FROM {s}.events WHERE id = $1"),
                &[&event.id],
            )
            .await
            .map_err(pg_store(op))?
            .is_some();
        if present {
            return Ok(false);
        }
        if let (Some(replica), Some(seq)) = (&event.origin_replica, event.origin_seq) {
            let clash = tx
                .query_opt(
                    &self.db.sql(
                        "SELECT id FROM {s}.events WHERE origin_replica = $1 AND origin_seq = $2",
                    ),
                    &[replica, &seq],
                )
                .await
                .map_err(pg_store(op))?;
            if let Some(other) = clash {
                return Err(author_position_taken(
                    &event.id,
                    replica,
                    seq,
                    &other.get::<_, String>(0),
                ));
            }
        }
        self.require_artifacts(&tx, &event.artifact_ids, op).await?;
        self.insert_row(&tx, event, &exported_metadata_json(&event.metadata), op)
            .await?;
        self.link_artifacts(&tx, &event.id, &event.artifact_ids, op)
            .await?;
        tx.commit().await.map_err(pg_store(op))?;
        Ok(true)
    }

    async fn import_artifact(&self, artifact: &Artifact) -> Result<bool> {
        validate_exported_artifact(artifact)?;
        let op = "import_artifact";
        self.db.ensure_tables().await.map_err(sidecar_error)?;
        let client = self.db.sidecar_client(op).await?;
        let inserted = client
            .execute(
                &self.db.sql(
                    "INSERT INTO {s}.artifacts (id, kind, sha256, size_bytes, content, \
                     created_by, created_at, metadata_json, origin_replica) VALUES ($1, $2, $3, \
                     $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING",
                ),
                &[
                    &artifact.id,
                    &artifact.kind,
                    &artifact.sha256,
                    &artifact.size_bytes,
                    &artifact.content,
                    &artifact.created_by,
                    &artifact.created_at,
                    &exported_metadata_json(&artifact.metadata),
                    &artifact.origin_replica,
                ],
            )
            .await
            .map_err(pg_store(op))?;
        Ok(inserted > 0)
    }

    fn append_signal(&self) -> Option<watch::Receiver<u64>> {
        self.listener().map(|sender| sender.subscribe())
    }
}
