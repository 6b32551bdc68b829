//! Watching the coordination log (MemPalace 3.11's `logstream watch`): an agent sleeps until an
//! event it cares about arrives. Filters are sets ("any of these"), the agent's own events are
//! excluded, and the cursor lives in a state file so that a restarted watcher resumes exactly
//! where it stopped: never skipping an event, at worst showing one again.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::Palace;
use crate::coordination::{
    Event, EventQuery, sanitize_event_type, sanitize_routing, sanitize_status, utc_now_iso,
};
use crate::error::{PalaceError, Result};

/// Which events wake a watcher. Each set means "any of these" (empty: any value); an event
/// from an excluded writer never wakes it, whatever else it matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchSpec {
    /// Streams.
    pub streams: BTreeSet<String>,
    /// Rooms.
    pub rooms: BTreeSet<String>,
    /// Topics.
    pub topics: BTreeSet<String>,
    /// Event types.
    pub types: BTreeSet<String>,
    /// Statuses.
    pub statuses: BTreeSet<String>,
    /// Addressees; a broadcast (`*`) matches any of them.
    pub to_agents: BTreeSet<String>,
    /// Writers.
    pub from_agents: BTreeSet<String>,
    /// Writers whose events never wake the watcher.
    pub exclude_from_agents: BTreeSet<String>,
    /// Correlation ids.
    pub correlation_ids: BTreeSet<String>,
}

impl WatchSpec {
    /// Adds `agent` as an addressee and excludes its own events (3.11's `--agent`): a watcher
    /// wakes for what is sent to it, broadcasts included, but never for its own broadcasts.
    pub fn for_agent(mut self, agent: &str) -> Self {
        self.to_agents.insert(agent.to_string());
        self.exclude_from_agents.insert(agent.to_string());
        self
    }

    /// The spec with every value checked by the rules `event_list` applies (3.11's messages)
    /// and trimmed; empty values are dropped (an empty filter matches anything).
    pub fn validated(self) -> Result<Self> {
        fn routing(values: BTreeSet<String>, field: &'static str) -> Result<BTreeSet<String>> {
            let mut out = BTreeSet::new();
            for v in values {
                if let Some(v) = sanitize_routing(Some(&v), field, false)? {
                    out.insert(v);
                }
            }
            Ok(out)
        }
        // Only an empty value means "any" (3.11's rule); white space is refused like any
        // other bad value, never silently dropped.
        let mut types = BTreeSet::new();
        for t in self.types.into_iter().filter(|t| !t.is_empty()) {
            types.insert(sanitize_event_type(&t)?);
        }
        let mut statuses = BTreeSet::new();
        for s in self.statuses {
            statuses.extend(sanitize_status(Some(&s))?);
        }
        Ok(WatchSpec {
            streams: routing(self.streams, "stream")?,
            rooms: routing(self.rooms, "room")?,
            topics: routing(self.topics, "topic")?,
            types,
            statuses,
            to_agents: routing(self.to_agents, "to_agent")?,
            from_agents: routing(self.from_agents, "from_agent")?,
            exclude_from_agents: routing(self.exclude_from_agents, "exclude_from_agent")?,
            correlation_ids: routing(self.correlation_ids, "correlation_id")?,
        })
    }

    /// Whether `event` wakes this watcher.
    pub fn matches(&self, event: &Event) -> bool {
        fn any(set: &BTreeSet<String>, value: Option<&str>) -> bool {
            set.is_empty() || value.is_some_and(|v| set.contains(v))
        }
        !self.exclude_from_agents.contains(&event.from_agent)
            && any(&self.streams, Some(&event.stream))
            && any(&self.rooms, Some(&event.room))
            && any(&self.topics, event.topic.as_deref())
            && any(&self.types, Some(&event.event_type))
            && any(&self.statuses, event.status.as_deref())
            && any(&self.correlation_ids, event.correlation_id.as_deref())
            && any(&self.from_agents, Some(&event.from_agent))
            && (self.to_agents.is_empty()
                || event
                    .to_agent
                    .as_deref()
                    .is_some_and(|t| t == "*" || self.to_agents.contains(t)))
    }

    /// The single-valued filters the log can apply itself (the rest is [`Self::matches`]'s).
    fn pushdown(&self) -> EventQuery {
        fn single(set: &BTreeSet<String>) -> Option<String> {
            (set.len() == 1)
                .then(|| set.iter().next().cloned())
                .flatten()
        }
        EventQuery {
            stream: single(&self.streams),
            room: single(&self.rooms),
            topic: single(&self.topics),
            event_type: single(&self.types),
            status: single(&self.statuses),
            correlation_id: single(&self.correlation_ids),
            to_agent: single(&self.to_agents),
            writer: single(&self.from_agents),
            ..EventQuery::default()
        }
    }
}

/// One poll of a watcher: the events that matched, and the cursor past every event examined
/// (matched or not), which is where the next poll starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WatchBatch {
    /// Matching events, oldest first.
    pub events: Vec<Event>,
    /// The newest event examined, else the cursor the poll started from.
    pub cursor: Option<String>,
}

impl Palace {
    /// The newest event's id (where a watcher starts "at the tip"), `None` for an empty log.
    pub async fn latest_event_id(&self) -> Result<Option<String>> {
        let page = self
            .event_list(&EventQuery {
                limit: Some(1),
                order: Some("desc".into()),
                ..EventQuery::default()
            })
            .await?;
        Ok(page.events.into_iter().next().map(|e| e.id))
    }

    /// Waits up to `poll` (at most 5 minutes) for events after `cursor` (from the start when
    /// `None`), at most `limit` of them, and answers those `spec` matches. Nothing new within
    /// `poll` is an empty batch with the cursor unchanged. An unknown cursor is an error.
    pub async fn watch_poll(
        &self,
        spec: &WatchSpec,
        cursor: Option<&str>,
        poll: Duration,
        limit: i64,
    ) -> Result<WatchBatch> {
        let mut query = spec.pushdown();
        query.since_event_id = cursor.map(str::to_string);
        query.limit = Some(limit);
        let timeout_ms = i64::try_from(poll.as_millis()).unwrap_or(i64::MAX);
        let waited = self.event_wait(&query, Some(timeout_ms)).await?;
        let cursor = waited
            .events
            .last()
            .map(|e| e.id.clone())
            .or_else(|| cursor.map(str::to_string));
        Ok(WatchBatch {
            events: waited
                .events
                .into_iter()
                .filter(|e| spec.matches(e))
                .collect(),
            cursor,
        })
    }
}

/// What a watch state file holds. "No cursor" is four different facts, and only a genuine
/// first run ([`WatchState::Absent`]) may start at the tip of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchState {
    /// No state file: a first run.
    Absent,
    /// Resume strictly after this event.
    Cursor(String),
    /// The watcher started on an empty log and has seen nothing: replay from the start.
    Empty,
    /// Unreadable or not a state object: replay from the start rather than skip.
    Corrupt,
}

/// A watcher's cursor file: `{"cursor", "updated_at", "agent"}`, as 3.11 writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchStateFile {
    path: PathBuf,
}

impl WatchStateFile {
    /// The state file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        WatchStateFile { path: path.into() }
    }

    /// 3.11's default for an agent: `<home>/.mempalace/watch/<agent>.json`, with `_` doubled
    /// and `:`, `/`, `\` turned into `_` (so no identity escapes the folder or collides).
    pub fn for_agent(home: &Path, agent: &str) -> Result<Self> {
        let agent = agent.trim();
        let safe = agent.replace('_', "__").replace([':', '/', '\\'], "_");
        if safe.is_empty() || safe == "." || safe == ".." {
            return Err(PalaceError::invalid(
                "agent",
                "agent identity is required to name a watch state file",
            ));
        }
        Ok(WatchStateFile::new(
            home.join(".mempalace")
                .join("watch")
                .join(format!("{safe}.json")),
        ))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file says (a missing file is [`WatchState::Absent`]; any other failure to
    /// read it is [`WatchState::Corrupt`]).
    pub fn read(&self) -> WatchState {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return WatchState::Absent,
            Err(_) => return WatchState::Corrupt,
        };
        let Ok(Value::Object(state)) = serde_json::from_str::<Value>(&text) else {
            return WatchState::Corrupt;
        };
        match state.get("cursor") {
            Some(Value::String(c)) if !c.is_empty() => WatchState::Cursor(c.clone()),
            Some(_) => WatchState::Empty,
            None => WatchState::Corrupt,
        }
    }

    /// Records `cursor` atomically (a new temporary file beside it, synced, renamed over it):
    /// a crash mid-write never leaves a file that reads back as an older cursor.
    pub fn write(&self, cursor: Option<&str>, agent: Option<&str>) -> std::io::Result<()> {
        let mut state = Map::new();
        state.insert(
            "cursor".into(),
            cursor.map_or(Value::Null, |c| Value::String(c.into())),
        );
        state.insert("updated_at".into(), Value::String(utc_now_iso()));
        if let Some(agent) = agent {
            state.insert("agent".into(), Value::String(agent.into()));
        }
        let parent = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&parent)?;
        tmp.write_all(Value::Object(state).to_string().as_bytes())?;
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(from: &str, to: Option<&str>, event_type: &str) -> Event {
        serde_json::from_value(serde_json::json!({
            "id": "evt_1", "seq": 1, "origin_replica": null, "origin_seq": null, "hlc": null,
            "type": event_type, "stream": "project/x", "room": "delegation", "topic": null,
            "from_agent": from, "to_agent": to, "correlation_id": null, "branch": null,
            "base_commit": null, "status": null, "artifact_ids": [], "body": "",
            "created_at": "2026-12-07T00:00:00Z", "metadata": {}
        }))
        .unwrap()
    }

    #[test]
    fn an_agent_wakes_for_its_mail_and_broadcasts_but_not_its_own_events() {
        let spec = WatchSpec {
            types: ["task.request".to_string(), "patch.ready".to_string()].into(),
            ..WatchSpec::default()
        }
        .for_agent("mac:codex:x");
        assert!(spec.matches(&event("b", Some("mac:codex:x"), "task.request")));
        assert!(spec.matches(&event("b", Some("*"), "patch.ready")));
        assert!(!spec.matches(&event("mac:codex:x", Some("*"), "task.request")));
        assert!(!spec.matches(&event("b", Some("other"), "task.request")));
        assert!(!spec.matches(&event("b", Some("mac:codex:x"), "status")));
        assert!(!spec.matches(&event("b", None, "task.request")));
    }

    #[test]
    fn a_bad_value_is_refused_whatever_the_number_of_values() {
        for types in [vec!["Task.Request"], vec!["Task.Request", "patch.ready"]] {
            let spec = WatchSpec {
                types: types.into_iter().map(String::from).collect(),
                ..WatchSpec::default()
            };
            assert!(spec.validated().is_err());
        }
        for statuses in [["nope".to_string()], [" ".to_string()]] {
            let spec = WatchSpec {
                statuses: statuses.into(),
                ..WatchSpec::default()
            };
            assert!(spec.validated().is_err());
        }
        let blank_type = WatchSpec {
            types: [" ".to_string()].into(),
            ..WatchSpec::default()
        };
        assert!(
            blank_type.validated().is_err(),
            "a blank type is refused, not dropped"
        );
    }

    #[test]
    fn the_state_file_tells_a_first_run_from_an_empty_log_and_a_corrupt_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = WatchStateFile::for_agent(dir.path(), "a:b_c:proj").unwrap();
        assert!(file.path().ends_with(".mempalace/watch/a_b__c_proj.json"));
        assert_eq!(file.read(), WatchState::Absent);
        file.write(None, Some("a:b_c:proj")).unwrap();
        assert_eq!(file.read(), WatchState::Empty);
        file.write(Some("evt_9"), None).unwrap();
        assert_eq!(file.read(), WatchState::Cursor("evt_9".into()));
        std::fs::write(file.path(), "{\"cur").unwrap();
        assert_eq!(file.read(), WatchState::Corrupt);
        std::fs::write(file.path(), "[1]").unwrap();
        assert_eq!(file.read(), WatchState::Corrupt);
        assert!(WatchStateFile::for_agent(dir.path(), " ").is_err());
        assert!(WatchStateFile::for_agent(dir.path(), "..").is_err());
    }
}
