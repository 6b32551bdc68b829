//! Coordination between agents sharing a palace: an append-only event log, tasks, artifacts
//! and patches (MemPalace 3.11's logstream).

use mempalace_core::coordination::{
    EventQuery, NewArtifact, NewEvent, NewPatch, NewTask, tool_error,
};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::MemPalaceServer;
use crate::answer::{ToolAnswer, json_answer};
use crate::parameters::Parameters;

/// The answer of coordination tool `tool`: its payload, or 3.11's failure payload for it
/// (`{success: false, error}`, or `{error}` for the reads), flagged `isError`.
fn answer<T: Serialize>(tool: &str, outcome: mempalace_core::Result<T>) -> ToolAnswer {
    match outcome {
        Ok(v) => Ok(json_answer(&serde_json::to_value(v).unwrap_or_default())),
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(
            tool_error(tool, &e).to_string(),
        )])),
    }
}

/// The core type with the same fields as a tool's arguments.
fn convert<A: Serialize, T: DeserializeOwned>(args: &A) -> mempalace_core::Result<T> {
    serde_json::to_value(args)
        .and_then(serde_json::from_value)
        .map_err(|e| mempalace_core::PalaceError::invalid("arguments", e.to_string()))
}

/// `mempalace_event_append`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventAppendArgs {
    /// Event type, e.g. 'task.request', 'task.reply', 'patch.ready'.
    #[serde(rename = "type")]
    pub event_type: String,
    /// Logical stream, e.g. 'project/mempalace' or 'shared_agent_brain'.
    pub stream: String,
    /// Sub-channel, e.g. 'delegation', 'patches', 'reviews', 'status'.
    pub room: String,
    /// Topic to group related work, e.g. 'auth-v2' (optional).
    #[serde(default)]
    pub topic: Option<String>,
    /// Writer agent identity.
    pub from_agent: String,
    /// Target agent, or '*' for broadcast (optional).
    #[serde(default)]
    pub to_agent: Option<String>,
    /// Task/conversation id tying request and reply events (optional).
    #[serde(default)]
    pub correlation_id: Option<String>,
    /// Git branch, when relevant (optional).
    #[serde(default)]
    pub branch: Option<String>,
    /// Git commit the work started from (optional).
    #[serde(default)]
    pub base_commit: Option<String>,
    /// One of: open, claimed, ready, applied, blocked, failed, superseded (optional).
    #[serde(default)]
    pub status: Option<String>,
    /// Verbatim human-readable content (optional, max 256 KiB).
    #[serde(default)]
    pub body: Option<String>,
    /// Extra structured fields, stored verbatim (optional).
    #[serde(default)]
    pub metadata: Option<Value>,
    /// Ids of already-stored artifacts to reference (optional).
    #[serde(default)]
    pub artifact_ids: Option<Vec<String>>,
}

/// `mempalace_task_create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateArgs {
    /// Project routing name.
    pub project: String,
    /// Requesting agent identity.
    pub from_agent: String,
    /// Worker agent identity.
    pub to_agent: String,
    /// Exact verbatim task goal.
    pub goal: String,
    /// Git branch for the work.
    pub branch: String,
    /// Immutable hexadecimal commit id the worker must start from; branches and tags are rejected.
    pub base_commit: String,
    /// Exact verbatim definition of done.
    pub done: String,
}

/// `mempalace_event_list` (and the filters of `mempalace_event_wait`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventListArgs {
    /// Filter by stream (optional).
    #[serde(default)]
    pub stream: Option<String>,
    /// Filter by room (optional).
    #[serde(default)]
    pub room: Option<String>,
    /// Filter by topic (optional).
    #[serde(default)]
    pub topic: Option<String>,
    /// Filter by event type (optional).
    #[serde(default, rename = "type")]
    pub event_type: Option<String>,
    /// Filter by target agent; also matches '*' broadcasts (optional).
    #[serde(default)]
    pub to_agent: Option<String>,
    /// Your agent identity (optional). NOT a filter: to filter by who wrote an event use writer.
    #[serde(default)]
    pub from_agent: Option<String>,
    /// Filter by the agent that wrote the event (optional).
    #[serde(default)]
    pub writer: Option<String>,
    /// Filter by correlation id (optional).
    #[serde(default)]
    pub correlation_id: Option<String>,
    /// Filter by status (optional).
    #[serde(default)]
    pub status: Option<String>,
    /// Only events strictly after this event id in append order: the resume cursor (optional).
    #[serde(default)]
    pub since_event_id: Option<String>,
    /// Only events strictly before this event id in append order (optional).
    #[serde(default)]
    pub before_event_id: Option<String>,
    /// Time window, inclusive: events created at or after this time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ). Not a resume cursor.
    #[serde(default)]
    pub since_created_at: Option<String>,
    /// Max events to return (default 50, at most 500).
    #[serde(default)]
    pub limit: Option<i64>,
    /// 'desc' (newest first, default without a cursor) or 'asc' (default with since_event_id).
    #[serde(default)]
    pub order: Option<String>,
    /// Truncate each event body to a short excerpt (default false).
    #[serde(default)]
    pub preview: bool,
}

/// `mempalace_event_wait`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventWaitArgs {
    /// Filter by stream (optional).
    #[serde(default)]
    pub stream: Option<String>,
    /// Filter by room (optional).
    #[serde(default)]
    pub room: Option<String>,
    /// Filter by topic (optional).
    #[serde(default)]
    pub topic: Option<String>,
    /// Filter by event type (optional).
    #[serde(default, rename = "type")]
    pub event_type: Option<String>,
    /// Filter by target agent; also matches '*' broadcasts (optional).
    #[serde(default)]
    pub to_agent: Option<String>,
    /// Your agent identity (optional). NOT a filter.
    #[serde(default)]
    pub from_agent: Option<String>,
    /// Filter by the agent that wrote the event (optional).
    #[serde(default)]
    pub writer: Option<String>,
    /// Filter by correlation id (optional).
    #[serde(default)]
    pub correlation_id: Option<String>,
    /// Filter by status (optional).
    #[serde(default)]
    pub status: Option<String>,
    /// Only match events strictly after this event id (optional).
    #[serde(default)]
    pub since_event_id: Option<String>,
    /// Time window filter, inclusive (optional). Not a resume cursor.
    #[serde(default)]
    pub since_created_at: Option<String>,
    /// How long to wait in milliseconds (default 60000, max 300000).
    #[serde(default)]
    pub timeout_ms: Option<i64>,
    /// Max events to return when matches exist (default 50).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// `mempalace_event_ack`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventAckArgs {
    /// Id of the event to acknowledge.
    pub event_id: String,
    /// Acknowledging agent identity.
    pub from_agent: String,
    /// One of: open, claimed, ready, applied, blocked, failed, superseded (optional).
    #[serde(default)]
    pub status: Option<String>,
    /// Verbatim ack notes (optional).
    #[serde(default)]
    pub body: Option<String>,
    /// Topic override (defaults to the target event's topic, optional).
    #[serde(default)]
    pub topic: Option<String>,
}

/// `mempalace_artifact_put`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactPutArgs {
    /// One of: patch, file, log, json, note.
    pub kind: String,
    /// Exact artifact content.
    pub content: String,
    /// Writer agent identity.
    pub created_by: String,
    /// Extra structured fields, e.g. branch/base_commit (optional).
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// `mempalace_artifact_get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArtifactGetArgs {
    /// Artifact id to fetch.
    pub artifact_id: String,
}

/// `mempalace_patch_submit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchSubmitArgs {
    /// Unified diff content.
    pub content: String,
    /// Submitting agent identity.
    pub from_agent: String,
    /// Logical stream, e.g. 'project/mempalace'.
    pub stream: String,
    /// Sub-channel (default 'patches').
    #[serde(default)]
    pub room: Option<String>,
    /// Topic name (optional).
    #[serde(default)]
    pub topic: Option<String>,
    /// Target agent or '*' (optional).
    #[serde(default)]
    pub to_agent: Option<String>,
    /// Task id tying this patch to its request (optional).
    #[serde(default)]
    pub correlation_id: Option<String>,
    /// Git branch (optional).
    #[serde(default)]
    pub branch: Option<String>,
    /// Git commit the patch applies to (optional).
    #[serde(default)]
    pub base_commit: Option<String>,
    /// Verbatim notes (optional).
    #[serde(default)]
    pub body: Option<String>,
    /// Extra structured fields (optional).
    #[serde(default)]
    pub metadata: Option<Value>,
}

#[tool_router(router = coordination_tools, vis = "pub(crate)")]
impl MemPalaceServer {
    /// Append an immutable agent-coordination event to the log. Use for delegating work (task.request), replying (task.reply) and announcing artifacts (patch.ready). Events are append-only; corrections are new events.
    #[tool(name = "mempalace_event_append")]
    async fn event_append(&self, Parameters(a): Parameters<EventAppendArgs>) -> ToolAnswer {
        let outcome = match convert::<_, NewEvent>(&a) {
            Ok(event) => self.palace.event_append(&event).await,
            Err(e) => Err(e),
        };
        answer("event_append", outcome)
    }

    /// Create a complete immutable task.request for another agent and return its stored event plus one short ready-to-paste handoff line. Preview the exact task with the user before this append.
    #[tool(name = "mempalace_task_create")]
    async fn task_create(&self, Parameters(a): Parameters<TaskCreateArgs>) -> ToolAnswer {
        let outcome = match convert::<_, NewTask>(&a) {
            Ok(task) => self.palace.task_create(&task).await,
            Err(e) => Err(e),
        };
        answer("task_create", outcome)
    }

    /// List agent-coordination events with structured filters. Newest first without since_event_id; oldest first when resuming from since_event_id (strictly AFTER that event in append order, so it cannot skip anything). to_agent=<you> also matches '*' broadcasts; writer=<agent> filters by who wrote an event. To wait for future events, use mempalace_event_wait.
    #[tool(name = "mempalace_event_list", annotations(read_only_hint = true))]
    async fn event_list(&self, Parameters(a): Parameters<EventListArgs>) -> ToolAnswer {
        let outcome = match convert::<_, EventQuery>(&a) {
            Ok(query) => self.palace.event_list(&query).await,
            Err(e) => Err(e),
        };
        answer("event_list", outcome)
    }

    /// Block until a matching coordination event exists or the timeout expires (default 60 s, max 5 minutes). Returns {timed_out: true, events: []} on timeout — a normal result. On timeout call it again with since_event_id set to the last event you processed.
    #[tool(name = "mempalace_event_wait", annotations(read_only_hint = true))]
    async fn event_wait(&self, Parameters(a): Parameters<EventWaitArgs>) -> ToolAnswer {
        let timeout_ms = a.timeout_ms;
        let query = EventQuery {
            stream: a.stream,
            room: a.room,
            topic: a.topic,
            event_type: a.event_type,
            to_agent: a.to_agent,
            from_agent: a.from_agent,
            writer: a.writer,
            correlation_id: a.correlation_id,
            status: a.status,
            since_event_id: a.since_event_id,
            since_created_at: a.since_created_at,
            limit: a.limit,
            ..EventQuery::default()
        };
        answer(
            "event_wait",
            self.palace.event_wait(&query, timeout_ms).await,
        )
    }

    /// Acknowledge a coordination event: appends a new event.ack routed back to the original writer with the correlation id copied. Never changes the target event.
    #[tool(name = "mempalace_event_ack")]
    async fn event_ack(&self, Parameters(a): Parameters<EventAckArgs>) -> ToolAnswer {
        answer(
            "event_ack",
            self.palace
                .event_ack(
                    &a.event_id,
                    &a.from_agent,
                    a.status.as_deref(),
                    a.body.as_deref(),
                    a.topic.as_deref(),
                )
                .await,
        )
    }

    /// Store exact artifact content (unified diff patch, file, log, json, note) for agent handoffs. Returns id, sha256 and size_bytes. UTF-8 text only, max 4 MiB.
    #[tool(name = "mempalace_artifact_put")]
    async fn artifact_put(&self, Parameters(a): Parameters<ArtifactPutArgs>) -> ToolAnswer {
        let outcome = match convert::<_, NewArtifact>(&a) {
            Ok(artifact) => self.palace.artifact_put(&artifact).await,
            Err(e) => Err(e),
        };
        answer("artifact_put", outcome)
    }

    /// Fetch a coordination artifact by id — exact content plus sha256 for verification.
    #[tool(name = "mempalace_artifact_get", annotations(read_only_hint = true))]
    async fn artifact_get(&self, Parameters(a): Parameters<ArtifactGetArgs>) -> ToolAnswer {
        answer(
            "artifact_get",
            self.palace.artifact_get(&a.artifact_id).await,
        )
    }

    /// Store a patch artifact and append its patch.ready event in one call. Use when handing completed work to another agent.
    #[tool(name = "mempalace_patch_submit")]
    async fn patch_submit(&self, Parameters(a): Parameters<PatchSubmitArgs>) -> ToolAnswer {
        let outcome = match convert::<_, NewPatch>(&a) {
            Ok(patch) => self.palace.patch_submit(&patch).await,
            Err(e) => Err(e),
        };
        answer("patch_submit", outcome)
    }
}
