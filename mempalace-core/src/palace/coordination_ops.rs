//! Coordination between agents sharing a palace (events, tasks, artifacts, patches), as
//! Palace methods over the palace's [`crate::coordination::Coordination`] service.

use super::Palace;
use crate::coordination::{
    ArtifactFound, ArtifactStored, EventList, EventQuery, EventWait, EventWritten, NewArtifact,
    NewEvent, NewPatch, NewTask, PatchSubmitted, TaskCreated,
};
use crate::error::Result;

impl Palace {
    /// Appends an immutable coordination event (a task request, a reply, a patch announcement).
    pub async fn event_append(&self, event: &NewEvent) -> Result<EventWritten> {
        self.coordination.event_append(event).await
    }

    /// Coordination events matching `query`, by append order (see [`EventQuery`]).
    pub async fn event_list(&self, query: &EventQuery) -> Result<EventList> {
        self.coordination.event_list(query).await
    }

    /// Waits until an event matching `query` exists or `timeout_ms` passes (default 60 s,
    /// at most 5 minutes); a timeout answers `timed_out: true` and no events.
    pub async fn event_wait(
        &self,
        query: &EventQuery,
        timeout_ms: Option<i64>,
    ) -> Result<EventWait> {
        self.coordination.event_wait(query, timeout_ms).await
    }

    /// Acknowledges an event with a new `event.ack` routed back to its writer.
    pub async fn event_ack(
        &self,
        event_id: &str,
        from_agent: &str,
        status: Option<&str>,
        body: Option<&str>,
        topic: Option<&str>,
    ) -> Result<EventWritten> {
        self.coordination
            .event_ack(event_id, from_agent, status, body, topic)
            .await
    }

    /// Files a complete `task.request` for another agent, with a handoff line to paste.
    pub async fn task_create(&self, task: &NewTask) -> Result<TaskCreated> {
        self.coordination.task_create(task).await
    }

    /// Stores exact artifact content (a patch, file, log, JSON or note) for a handoff.
    pub async fn artifact_put(&self, artifact: &NewArtifact) -> Result<ArtifactStored> {
        self.coordination.artifact_put(artifact).await
    }

    /// An artifact by id, exact content and sha256 included.
    pub async fn artifact_get(&self, artifact_id: &str) -> Result<ArtifactFound> {
        self.coordination.artifact_get(artifact_id).await
    }

    /// Stores a patch artifact and appends its `patch.ready` event, in one call.
    pub async fn patch_submit(&self, patch: &NewPatch) -> Result<PatchSubmitted> {
        self.coordination.patch_submit(patch).await
    }
}

/// `mesh_peers` result: this palace's replica and what it knows of others.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeshPeers {
    /// This replica: its id (from `replica.json`, once anything was logged), the host name,
    /// and its version vector (the newest sequence number seen from each origin).
    #[serde(rename = "self")]
    pub this: MeshReplica,
    /// Configured peers. This port does not sync palaces over the network (several hosts
    /// share one palace through Qdrant instead), so there are none.
    pub peers: Vec<serde_json::Value>,
    /// Origins present in the log that are not this replica.
    pub transitive_origins: Vec<String>,
    /// Where the peer status comes from: always "local" here.
    pub estate_source: String,
}

/// One replica in [`MeshPeers`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeshReplica {
    /// The replica id, when one was minted.
    pub replica_id: Option<String>,
    /// The host name.
    pub name: String,
    /// Origin replica id → newest origin sequence number in this palace's log.
    pub version_vector: std::collections::BTreeMap<String, i64>,
}

impl Palace {
    /// This palace's replica id and version vector (MemPalace 3.11's mesh snapshot). Reads
    /// the whole coordination log once.
    pub async fn mesh_peers(&self) -> Result<MeshPeers> {
        let replica_id = std::fs::read_to_string(crate::PalaceLayout::new(&self.path).replica())
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("replica_id")?.as_str().map(str::to_string));
        let mut vector = std::collections::BTreeMap::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self
                .coordination
                .event_list(&EventQuery {
                    since_event_id: cursor.clone(),
                    limit: Some(500),
                    order: Some("asc".into()),
                    ..EventQuery::default()
                })
                .await?;
            let Some(last) = page.events.last() else {
                break;
            };
            cursor = Some(last.id.clone());
            for e in &page.events {
                if let (Some(origin), Some(seq)) = (&e.origin_replica, e.origin_seq) {
                    let newest = vector.entry(origin.clone()).or_insert(seq);
                    *newest = (*newest).max(seq);
                }
            }
            if page.events.len() < 500 {
                break;
            }
        }
        let transitive_origins = vector
            .keys()
            .filter(|o| Some(*o) != replica_id.as_ref())
            .cloned()
            .collect();
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .or_else(|_| std::env::var("HOSTNAME"))
            .unwrap_or_default();
        Ok(MeshPeers {
            this: MeshReplica {
                replica_id,
                name,
                version_vector: vector,
            },
            peers: Vec::new(),
            transitive_origins,
            estate_source: "local".into(),
        })
    }
}
