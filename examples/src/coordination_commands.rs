//! `mempalace logstream`, `task` and `artifact`: the palace's coordination log from the shell,
//! with MemPalace 3.11's flags, output and exit codes (0 done, 1 refused, 2 timed out or idle,
//! 130 interrupted). Each is a thin call to a `Palace` method; with `--json` an error is
//! `{"error": …}` on stdout, else `Error: …` on stderr.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use mempalace::core::coordination::{
    Event, EventQuery, MAX_ARTIFACT_BYTES, MAX_BODY_BYTES, NewArtifact, NewEvent, NewTask,
    error_message, python_json_text,
};
use mempalace::core::coordination_watch::{WatchBatch, WatchSpec, WatchState, WatchStateFile};
use mempalace::core::locations::expand_home;
use mempalace::core::{Palace, PalaceError};
use serde_json::{Value, json};

use crate::render::terminal_safe;

/// A process exit code.
pub type ExitCode = i32;

/// Why a coordination command stopped: 3.11's message for it.
#[derive(Debug)]
pub struct Refusal(String);

impl From<PalaceError> for Refusal {
    fn from(e: PalaceError) -> Self {
        Refusal(error_message(&e))
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn refuse<T>(message: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(message.into()))
}

/// The filters `logstream list` and `wait` share.
#[derive(Args, Debug, Default)]
pub struct EventFilters {
    /// Stream, e.g. project/mempalace.
    #[arg(long)]
    stream: Option<String>,
    /// Room, e.g. delegation, patches.
    #[arg(long)]
    room: Option<String>,
    /// Topic, e.g. auth-v2.
    #[arg(long)]
    topic: Option<String>,
    /// Event type, e.g. task.request.
    #[arg(long = "type", value_name = "TYPE")]
    event_type: Option<String>,
    /// Target agent (also matches '*').
    #[arg(long)]
    to_agent: Option<String>,
    /// Writer agent.
    #[arg(long)]
    from_agent: Option<String>,
    /// Task/conversation id.
    #[arg(long)]
    correlation_id: Option<String>,
    /// open|claimed|ready|applied|blocked|failed|superseded.
    #[arg(long)]
    status: Option<String>,
    /// Only events strictly after this id.
    #[arg(long)]
    since_event_id: Option<String>,
    /// Only events at/after this time (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ).
    #[arg(long)]
    since_created_at: Option<String>,
}

impl EventFilters {
    /// The palace query these flags ask for (`--from-agent` filters by writer, as in 3.11's CLI).
    fn query(self, limit: i64) -> EventQuery {
        EventQuery {
            stream: self.stream,
            room: self.room,
            topic: self.topic,
            event_type: self.event_type,
            to_agent: self.to_agent,
            writer: self.from_agent,
            correlation_id: self.correlation_id,
            status: self.status,
            since_event_id: self.since_event_id,
            since_created_at: self.since_created_at,
            limit: Some(limit),
            ..EventQuery::default()
        }
    }
}

/// `--order` of `logstream list`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum OrderArg {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

/// `mempalace logstream …`: agent coordination events (RFC 003).
#[derive(Subcommand, Debug)]
pub enum LogstreamCommand {
    /// Append a coordination event.
    Append(AppendArgs),
    /// List events (oldest first by default).
    List {
        #[command(flatten)]
        filters: EventFilters,
        /// Only events strictly before this id in append order.
        #[arg(long)]
        before_event_id: Option<String>,
        /// asc (oldest first) or desc (newest first).
        #[arg(long, value_enum, default_value = "asc")]
        order: OrderArg,
        /// Max events.
        #[arg(long, default_value_t = 50)]
        limit: i64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Block until a matching event exists (exit 2 on timeout).
    Wait {
        #[command(flatten)]
        filters: EventFilters,
        /// How long to wait in ms (max 300000).
        #[arg(long, default_value_t = 60_000)]
        timeout_ms: i64,
        /// Max events to return on match.
        #[arg(long, default_value_t = 50)]
        limit: i64,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Background watcher: block until interesting events arrive, then wake (exit 0 on mail,
    /// 2 on idle).
    Watch(WatchArgs),
    /// Acknowledge an event (appends event.ack, never mutates).
    Ack {
        /// Event id to acknowledge.
        event_id: String,
        /// Acknowledging agent identity.
        #[arg(long)]
        from_agent: String,
        /// open|claimed|ready|applied|blocked|failed|superseded.
        #[arg(long)]
        status: Option<String>,
        /// Topic override (defaults to the target event's topic).
        #[arg(long)]
        topic: Option<String>,
        /// Verbatim ack notes.
        #[arg(long)]
        body: Option<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// `logstream append`.
#[derive(Args, Debug)]
pub struct AppendArgs {
    /// Event type, e.g. task.request.
    #[arg(long = "type", value_name = "TYPE")]
    event_type: String,
    /// Stream, e.g. project/mempalace.
    #[arg(long)]
    stream: String,
    /// Room, e.g. delegation.
    #[arg(long)]
    room: String,
    /// Topic name, e.g. auth-v2.
    #[arg(long)]
    topic: Option<String>,
    /// Writer agent identity.
    #[arg(long)]
    from_agent: String,
    /// Target agent or '*'.
    #[arg(long)]
    to_agent: Option<String>,
    /// Task/conversation id.
    #[arg(long)]
    correlation_id: Option<String>,
    /// Git branch.
    #[arg(long)]
    branch: Option<String>,
    /// Git commit work started from.
    #[arg(long)]
    base_commit: Option<String>,
    /// open|claimed|ready|applied|blocked|failed|superseded.
    #[arg(long)]
    status: Option<String>,
    /// Verbatim body text.
    #[arg(long)]
    body: Option<String>,
    /// Read the body from a file ('-' for stdin), byte for byte.
    #[arg(long, value_name = "PATH")]
    body_file: Option<String>,
    /// Extra fields as a JSON object.
    #[arg(long)]
    metadata: Option<String>,
    /// Reference an already-stored artifact (repeatable).
    #[arg(long = "artifact-id", value_name = "ID")]
    artifact_ids: Vec<String>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// `logstream watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Your identity: shorthand for --to-agent ID --exclude-from-agent ID (wake for what is
    /// addressed to you, broadcasts included, never for your own events).
    #[arg(long)]
    agent: Option<String>,
    /// Stream (repeatable; matches any).
    #[arg(long)]
    stream: Vec<String>,
    /// Room (repeatable; matches any).
    #[arg(long)]
    room: Vec<String>,
    /// Topic (repeatable; matches any).
    #[arg(long)]
    topic: Vec<String>,
    /// Event type (repeatable; matches any).
    #[arg(long = "type", value_name = "TYPE")]
    event_type: Vec<String>,
    /// Status (repeatable; matches any).
    #[arg(long)]
    status: Vec<String>,
    /// Target agent (repeatable; '*' matches).
    #[arg(long)]
    to_agent: Vec<String>,
    /// Writer agent (repeatable).
    #[arg(long)]
    from_agent: Vec<String>,
    /// Never wake for events written by this agent (repeatable).
    #[arg(long)]
    exclude_from_agent: Vec<String>,
    /// Correlation id (repeatable).
    #[arg(long)]
    correlation_id: Vec<String>,
    /// Start strictly after this event id (overrides --state-file).
    #[arg(long)]
    since_event_id: Option<String>,
    /// Persist the cursor here so a restart resumes exactly where it stopped [default with
    /// --agent: ~/.mempalace/watch/AGENT.json; '' for none].
    #[arg(long, value_name = "PATH")]
    state_file: Option<String>,
    /// Replay the log from the beginning when there is no cursor (default: start at the tip).
    #[arg(long)]
    from_start: bool,
    /// Keep watching after a match instead of exiting on the first one.
    #[arg(long)]
    follow: bool,
    /// Give up after this long with no match (0 = wait forever).
    #[arg(long, default_value_t = 0)]
    idle_exit_ms: i64,
    /// Long-poll length per iteration.
    #[arg(long, default_value_t = 300_000)]
    poll_timeout_ms: i64,
    /// Max events per poll.
    #[arg(long, default_value_t = 50)]
    limit: i64,
    /// Machine-readable output (NDJSON with --follow).
    #[arg(long)]
    json: bool,
}

/// `mempalace task …`.
#[derive(Subcommand, Debug)]
pub enum TaskCommand {
    /// Create a canonical task.request and print a pasteable handoff. (3.11's `task launch`,
    /// which starts a coding agent, is not offered.)
    Create(TaskArgs),
}

/// `task create`.
#[derive(Args, Debug)]
pub struct TaskArgs {
    /// Project name for routing.
    #[arg(long)]
    project: String,
    /// Requesting agent identity.
    #[arg(long)]
    from_agent: String,
    /// Worker agent identity.
    #[arg(long)]
    to_agent: String,
    /// Verbatim task goal.
    #[arg(
        long,
        required_unless_present = "goal_file",
        conflicts_with = "goal_file"
    )]
    goal: Option<String>,
    /// Read the task goal from a file ('-' for stdin).
    #[arg(long, value_name = "PATH")]
    goal_file: Option<String>,
    /// Git branch for the work.
    #[arg(long)]
    branch: String,
    /// Immutable hexadecimal commit id the worker must start from (not a branch or tag).
    #[arg(long)]
    base_commit: String,
    /// Verbatim definition of done.
    #[arg(
        long,
        required_unless_present = "done_file",
        conflicts_with = "done_file"
    )]
    done: Option<String>,
    /// Read the definition of done from a file ('-' for stdin).
    #[arg(long, value_name = "PATH")]
    done_file: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// `mempalace artifact …`: exact content for agent handoffs.
#[derive(Subcommand, Debug)]
pub enum ArtifactCommand {
    /// Store exact artifact content (stdin by default).
    Put {
        /// patch|file|log|json|note.
        #[arg(long)]
        kind: String,
        /// Writer agent identity.
        #[arg(long)]
        created_by: String,
        /// Inline content.
        #[arg(long)]
        content: Option<String>,
        /// Read content from a file ('-' for stdin; default stdin).
        #[arg(long, value_name = "PATH")]
        file: Option<String>,
        /// Extra fields as a JSON object.
        #[arg(long)]
        metadata: Option<String>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Fetch exact artifact content (stdout pipes into git apply).
    Get {
        /// Artifact id.
        artifact_id: String,
        /// Write the content to this file instead.
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        /// Metadata as JSON (content left out with --out).
        #[arg(long)]
        json: bool,
    },
}

impl LogstreamCommand {
    /// Whether the command prints JSON (and so its errors).
    fn json(&self) -> bool {
        match self {
            LogstreamCommand::Append(a) => a.json,
            LogstreamCommand::Watch(w) => w.json,
            LogstreamCommand::List { json, .. }
            | LogstreamCommand::Wait { json, .. }
            | LogstreamCommand::Ack { json, .. } => *json,
        }
    }
}

/// Runs `logstream …` and answers its exit code.
pub async fn logstream(palace: &Palace, command: LogstreamCommand) -> ExitCode {
    let json = command.json();
    finish(json, run_logstream(palace, command).await)
}

/// Runs `task …` and answers its exit code.
pub async fn task(palace: &Palace, command: TaskCommand) -> ExitCode {
    let TaskCommand::Create(args) = command;
    let json = args.json;
    finish(json, task_create(palace, args).await)
}

/// Runs `artifact …` and answers its exit code.
pub async fn artifact(palace: &Palace, command: ArtifactCommand) -> ExitCode {
    let json = match &command {
        ArtifactCommand::Put { json, .. } | ArtifactCommand::Get { json, .. } => *json,
    };
    finish(json, run_artifact(palace, command).await)
}

/// The exit code of a finished command, its refusal printed the way 3.11 prints it.
fn finish(json: bool, result: Result<ExitCode, Refusal>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(Refusal(message)) => {
            if json {
                // Python's `json.dumps({"error": …})`: its spacing, and non-ASCII as \uXXXX.
                println!(
                    "{}",
                    ascii_only(&python_json_text(&json!({ "error": message })))
                );
            } else {
                eprintln!("Error: {}", terminal_safe(&message));
            }
            1
        }
    }
}

async fn run_logstream(palace: &Palace, command: LogstreamCommand) -> Result<ExitCode, Refusal> {
    match command {
        LogstreamCommand::Append(a) => {
            let body = read_text(a.body, a.body_file.as_deref(), MAX_BODY_BYTES)?;
            let event = NewEvent {
                event_type: a.event_type,
                stream: a.stream,
                room: a.room,
                from_agent: a.from_agent,
                to_agent: a.to_agent,
                correlation_id: a.correlation_id,
                branch: a.branch,
                base_commit: a.base_commit,
                status: a.status,
                body,
                metadata: metadata(a.metadata.as_deref())?,
                artifact_ids: (!a.artifact_ids.is_empty()).then_some(a.artifact_ids),
                topic: a.topic,
            };
            let written = palace.event_append(&event).await?;
            print_event("Appended:", &written.event, a.json);
            Ok(0)
        }
        LogstreamCommand::List {
            filters,
            before_event_id,
            order,
            limit,
            json,
        } => {
            let mut query = filters.query(limit);
            query.before_event_id = before_event_id;
            query.order = Some(
                match order {
                    OrderArg::Asc => "asc",
                    OrderArg::Desc => "desc",
                }
                .into(),
            );
            let list = palace.event_list(&query).await?;
            if json {
                print_pretty(&json!({ "events": list.events, "count": list.count }));
            } else {
                print_events(&list.events, "No matching events.");
            }
            Ok(0)
        }
        LogstreamCommand::Wait {
            filters,
            timeout_ms,
            limit,
            json,
        } => {
            let waited = palace
                .event_wait(&filters.query(limit), Some(timeout_ms))
                .await?;
            if json {
                print_pretty(&json!({
                    "timed_out": waited.timed_out,
                    "events": waited.events,
                    "count": waited.count,
                }));
            } else if waited.timed_out {
                println!("Timed out; no matching events.");
            } else {
                print_events(&waited.events, "No matching events.");
            }
            Ok(if waited.timed_out { 2 } else { 0 })
        }
        LogstreamCommand::Watch(w) => watch(palace, w).await,
        LogstreamCommand::Ack {
            event_id,
            from_agent,
            status,
            topic,
            body,
            json,
        } => {
            let written = palace
                .event_ack(
                    &event_id,
                    &from_agent,
                    status.as_deref(),
                    body.as_deref(),
                    topic.as_deref(),
                )
                .await?;
            print_event("Acknowledged:", &written.event, json);
            Ok(0)
        }
    }
}

/// `logstream watch`: 3.11's watcher, its cursor rules included (see [`WatchState`]).
async fn watch(palace: &Palace, w: WatchArgs) -> Result<ExitCode, Refusal> {
    if w.poll_timeout_ms <= 0 {
        return refuse("--poll-timeout-ms must be a positive number of milliseconds");
    }
    if w.limit < 1 {
        return refuse("--limit must be a positive integer");
    }
    if w.idle_exit_ms < 0 {
        return refuse(
            "--idle-exit-ms must be zero (wait forever) or a positive number of milliseconds",
        );
    }
    let state_file = match (w.state_file.as_deref(), w.agent.as_deref()) {
        (Some(""), _) | (None, None) => None,
        (Some(path), _) => Some(WatchStateFile::new(expand_home(path))),
        (None, Some(agent)) => Some(WatchStateFile::for_agent(&expand_home("~"), agent)?),
    };
    let mut spec = WatchSpec {
        streams: w.stream.into_iter().collect(),
        rooms: w.room.into_iter().collect(),
        topics: w.topic.into_iter().collect(),
        types: w.event_type.into_iter().collect(),
        statuses: w.status.into_iter().collect(),
        to_agents: w.to_agent.into_iter().collect(),
        from_agents: w.from_agent.into_iter().collect(),
        exclude_from_agents: w.exclude_from_agent.into_iter().collect(),
        correlation_ids: w.correlation_id.into_iter().collect(),
    };
    if let Some(agent) = &w.agent {
        spec = spec.for_agent(agent);
    }
    let spec = spec.validated()?;
    let state = state_file
        .as_ref()
        .map_or(WatchState::Absent, WatchStateFile::read);
    let stored = match &state {
        WatchState::Cursor(c) => Some(c.clone()),
        _ => None,
    };
    let mut cursor = w.since_event_id.clone().or(stored);
    let mut skipped_from = None;
    if cursor.is_none() && !w.from_start && state == WatchState::Absent {
        // A first run starts at the tip: a watcher is for what arrives from now on.
        cursor = palace.latest_event_id().await?;
        skipped_from.clone_from(&cursor);
    }
    if let Some(anchor) = cursor.clone() {
        // The anchor is checked before it is written anywhere.
        let probe = EventQuery {
            since_event_id: Some(anchor.clone()),
            limit: Some(1),
            order: Some("asc".into()),
            ..EventQuery::default()
        };
        match palace.event_list(&probe).await {
            Ok(_) => {}
            Err(e @ PalaceError::InvalidInput { .. }) if w.since_event_id.is_some() => {
                return refuse(format!(
                    "{}. Nothing was written to the state file.",
                    error_message(&e)
                ));
            }
            Err(PalaceError::InvalidInput { .. }) => {
                eprintln!(
                    "Stored cursor {} no longer exists in this log; replaying from the start rather than refusing to run.",
                    terminal_safe(&anchor)
                );
                cursor = None;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(file) = &state_file
        && state == WatchState::Absent
        && let Err(e) = file.write(cursor.as_deref(), w.agent.as_deref())
    {
        return refuse(format!(
            "could not write the initial checkpoint to {}: {e}. Refusing to start: without it a restart would skip every event that arrives before then.",
            file.path().display()
        ));
    }
    if !w.json {
        let watching = w.agent.clone().unwrap_or_else(|| {
            if spec.to_agents.is_empty() {
                "everything".into()
            } else {
                spec.to_agents
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        });
        eprintln!(
            "Watching {} from {}; Ctrl-C to stop.",
            terminal_safe(&watching),
            terminal_safe(cursor.as_deref().unwrap_or("now"))
        );
    }
    if let Some(tip) = skipped_from {
        eprintln!(
            "Starting at the tip ({}); earlier events are not replayed. Use --from-start to replay them, or sweep with `mempalace logstream list`.",
            terminal_safe(&tip)
        );
    }
    if let (WatchState::Corrupt, Some(file)) = (&state, &state_file) {
        eprintln!(
            "State file {} is unreadable; replaying from the start rather than skipping to the tip, so nothing since the last good checkpoint is lost.",
            file.path().display()
        );
    }
    let checkpoint = |cursor: &Option<String>| {
        if let Some(file) = &state_file
            && let Err(e) = file.write(cursor.as_deref(), w.agent.as_deref())
        {
            // Losing a later checkpoint costs a replay, not a skip: keep watching.
            tracing::debug!(error = %e, path = %file.path().display(), "watch cursor not saved");
        }
    };
    let idle = u64::try_from(w.idle_exit_ms)
        .ok()
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis);
    let mut deadline = idle.map(|d| Instant::now() + d);
    let longest_poll = Duration::from_millis(w.poll_timeout_ms.unsigned_abs());
    let mut matched_any = false;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let poll = deadline.map_or(longest_poll, |d| {
            longest_poll.min(d.saturating_duration_since(Instant::now()))
        });
        let batch = if poll.is_zero() {
            WatchBatch {
                events: Vec::new(),
                cursor: cursor.clone(),
            }
        } else {
            tokio::select! {
                batch = palace.watch_poll(&spec, cursor.as_deref(), poll, w.limit) => batch?,
                _ = &mut interrupted => {
                    if !w.json {
                        eprintln!("Stopped.");
                    }
                    return Ok(130);
                }
            }
        };
        cursor = batch.cursor;
        if !batch.events.is_empty() {
            matched_any = true;
            if let Some(d) = idle {
                deadline = Some(Instant::now() + d);
            }
            let count = batch.events.len();
            if w.json {
                print_watch(
                    &json!({ "events": batch.events, "count": count, "cursor": cursor, "timed_out": false }),
                    w.follow,
                );
            } else {
                print_events(&batch.events, "");
            }
            let _ = std::io::stdout().flush();
            // After stdout: a kill between the two shows the event again instead of losing it.
            checkpoint(&cursor);
            if !w.follow {
                return Ok(0);
            }
            continue;
        }
        checkpoint(&cursor);
        if deadline.is_some_and(|d| Instant::now() >= d) {
            if w.json {
                print_watch(
                    &json!({ "events": [], "count": 0, "cursor": cursor, "timed_out": true }),
                    w.follow,
                );
            } else {
                println!("Idle timeout; no matching events.");
            }
            return Ok(if matched_any { 0 } else { 2 });
        }
    }
}

async fn task_create(palace: &Palace, args: TaskArgs) -> Result<ExitCode, Refusal> {
    let goal = read_text(args.goal, args.goal_file.as_deref(), MAX_BODY_BYTES)?.unwrap_or_default();
    let done = read_text(args.done, args.done_file.as_deref(), MAX_BODY_BYTES)?.unwrap_or_default();
    let created = palace
        .task_create(&NewTask {
            project: args.project,
            from_agent: args.from_agent,
            to_agent: args.to_agent.clone(),
            goal,
            branch: args.branch,
            base_commit: args.base_commit,
            done,
        })
        .await?;
    if args.json {
        print_pretty(&json!({ "task": created.task, "handoff": created.handoff }));
    } else {
        println!(
            "Task created: {}",
            terminal_safe(created.task.correlation_id.as_deref().unwrap_or_default())
        );
        println!("Event: {}", created.task.id);
        println!("To: {}", terminal_safe(&args.to_agent));
        println!("\nReady to paste:");
        println!("{}", crate::render::terminal_safe_block(&created.handoff));
    }
    Ok(0)
}

async fn run_artifact(palace: &Palace, command: ArtifactCommand) -> Result<ExitCode, Refusal> {
    match command {
        ArtifactCommand::Put {
            kind,
            created_by,
            content,
            file,
            metadata: meta,
            json,
        } => {
            let content = match read_text(content, file.as_deref(), MAX_ARTIFACT_BYTES)? {
                Some(content) => content,
                None => read_stdin(MAX_ARTIFACT_BYTES)?,
            };
            let stored = palace
                .artifact_put(&NewArtifact {
                    kind,
                    content,
                    created_by,
                    metadata: metadata(meta.as_deref())?,
                })
                .await?;
            let record = stored.artifact;
            if json {
                print_pretty(&record);
            } else {
                println!("Stored {}  kind={}", record.id, record.kind);
                println!("  sha256={}", record.sha256);
                println!("  size={} bytes", record.size_bytes);
            }
            for warning in record.warnings.iter().flatten() {
                eprintln!("Warning: {}", terminal_safe(warning));
            }
            Ok(0)
        }
        ArtifactCommand::Get {
            artifact_id,
            out,
            json,
        } => {
            let artifact = palace.artifact_get(&artifact_id).await?.artifact;
            let out = out.map(|p| expand_home(&p.to_string_lossy()));
            if let Some(path) = &out {
                std::fs::write(path, artifact.content.as_bytes())
                    .map_err(|e| Refusal(format!("cannot write {}: {e}", path.display())))?;
            }
            if json {
                let mut value = serde_json::to_value(&artifact)
                    .map_err(|e| Refusal(format!("cannot serialise the artifact: {e}")))?;
                if let (Some(path), Value::Object(map)) = (&out, &mut value) {
                    // `content_written_to` takes the place at the end, as in 3.11.
                    map.shift_remove("content");
                    map.insert(
                        "content_written_to".into(),
                        Value::String(path.display().to_string()),
                    );
                }
                print_pretty(&value);
            } else if let Some(path) = &out {
                println!("Wrote {} bytes to {}", artifact.size_bytes, path.display());
                println!("  sha256={}", artifact.sha256);
            } else {
                // The stored bytes exactly, for `mempalace artifact get ID | git apply`.
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(artifact.content.as_bytes());
                let _ = stdout.flush();
            }
            Ok(0)
        }
    }
}

/// Inline text or a file's (`-`: stdin's) exact bytes as UTF-8, at most `max_bytes` and one
/// more read (the palace refuses what is too long, with its own message); neither is `None`.
fn read_text(
    inline: Option<String>,
    file: Option<&str>,
    max_bytes: usize,
) -> Result<Option<String>, Refusal> {
    match (inline, file) {
        (Some(_), Some(_)) => refuse("pass inline text or a file, not both"),
        (Some(text), None) => Ok(Some(text)),
        (None, None) => Ok(None),
        (None, Some("-")) => read_stdin(max_bytes).map(Some),
        (None, Some(path)) => {
            let path = expand_home(path);
            let file = std::fs::File::open(&path)
                .map_err(|e| Refusal(format!("cannot read {}: {e}", path.display())))?;
            read_utf8(file, max_bytes, &path.display().to_string()).map(Some)
        }
    }
}

/// Stdin's exact bytes as UTF-8 (no newline translation), bounded as [`read_text`].
fn read_stdin(max_bytes: usize) -> Result<String, Refusal> {
    read_utf8(std::io::stdin().lock(), max_bytes, "stdin")
}

fn read_utf8(source: impl Read, max_bytes: usize, what: &str) -> Result<String, Refusal> {
    let mut bytes = Vec::new();
    source
        .take(max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Refusal(format!("cannot read {what}: {e}")))?;
    if bytes.len() > max_bytes {
        return refuse(format!("{what} is longer than {max_bytes} bytes"));
    }
    String::from_utf8(bytes).map_err(|_| Refusal(format!("{what} is not UTF-8 text")))
}

/// `--metadata`: a JSON object, or 3.11's message.
fn metadata(raw: Option<&str>) -> Result<Option<Value>, Refusal> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(raw) {
        Ok(v @ Value::Object(_)) => Ok(Some(v)),
        Ok(_) => refuse("--metadata must be a JSON object"),
        Err(e) => refuse(format!("--metadata is not valid JSON: {e}")),
    }
}

/// One event as 3.11's one-line listing: id, time, type, stream/room, writer->addressee, then
/// status, topic, correlation, artifacts and the body's first 80 characters.
pub fn event_line(e: &Event) -> String {
    let present = |v: &Option<String>| v.as_deref().filter(|s| !s.is_empty()).map(str::to_string);
    let target = present(&e.to_agent).unwrap_or_else(|| "*".into());
    let status = present(&e.status).map_or(String::new(), |s| format!(" [{s}]"));
    let topic = present(&e.topic).map_or(String::new(), |t| format!(" topic={t}"));
    let corr = present(&e.correlation_id).map_or(String::new(), |c| format!(" corr={c}"));
    let arts = if e.artifact_ids.is_empty() {
        String::new()
    } else {
        format!(" artifacts={}", e.artifact_ids.len())
    };
    let mut body = e.body.replace('\n', " ");
    if body.chars().count() > 80 {
        body = body.chars().take(77).collect::<String>() + "...";
    }
    let body = if body.is_empty() {
        body
    } else {
        format!(" :: {body}")
    };
    let line = format!(
        "  {}  {}  {}  {}/{}  {}->{target}{status}{topic}{corr}{arts}{body}",
        e.id, e.created_at, e.event_type, e.stream, e.room, e.from_agent
    );
    terminal_safe(&line).into_owned()
}

fn print_event(heading: &str, event: &Event, json: bool) {
    if json {
        print_pretty(event);
    } else {
        println!("{heading}");
        println!("{}", event_line(event));
    }
}

fn print_events(events: &[Event], none: &str) {
    if events.is_empty() {
        println!("{none}");
        return;
    }
    println!("{} event(s):", events.len());
    for e in events {
        println!("{}", event_line(e));
    }
}

/// JSON text with every non-ASCII character escaped (`\uXXXX`, surrogate pairs beyond the
/// BMP), as Python's `json.dumps` writes by default.
fn ascii_only(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// A watch record: one pretty document, or one line per record under `--follow` (3.11's
/// `json.dumps` spacing).
fn print_watch(value: &Value, follow: bool) {
    if follow {
        println!("{}", python_json_text(value));
    } else {
        print_pretty(value);
    }
}

fn print_pretty<T: serde::Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("Error: cannot serialise the answer: {e}"),
    }
}
