//! Agent harness hooks: what `mempalace hook run --hook H --harness X` does when Claude Code,
//! Codex or another harness calls it with the hook's JSON on stdin, so that every session is
//! filed as it goes, the project's memory is in the agent's context when a session starts,
//! and nothing is lost at compaction.
//!
//! Answers and exit codes are MemPalace 3.11's (`{}`, `systemMessage` checkpoints every 15
//! messages, `decision: block` in its legacy mode). What differs, by design:
//! - **session-start** adds the project's wake-up text to the agent's context
//!   (`hookSpecificOutput.additionalContext`, at most [`HookSettings::context_chars`]);
//!   3.11 adds nothing.
//! - **stop**, **precompact** and **session-end** file the session's new turns, only those
//!   not filed before, in the hook's own process under a deadline (stop, precompact) or in a
//!   detached process (session-end, whose harness budget is short); 3.11 spawns a miner that
//!   re-files the whole transcript whenever it changed. One lock per transcript: a hook that
//!   finds another filing the same transcript does not file it twice (stop goes on; precompact
//!   waits for it, then files the rest).
//! - A Codex rollout's turns go to its project's wing (from `session_meta.cwd`); 3.11 files
//!   them under `sessions`.
//! - A transcript is read only when it is an absolute, regular (not symlinked) `.jsonl` /
//!   `.json` file inside the user's folders and under the size limit
//!   ([`transcript::TranscriptFile::check`]); any payload, however malformed, gets an answer.

pub mod answer;
pub mod install;
pub mod payload;
pub mod project_wing;
pub mod settings;
pub mod state;
pub mod sweep;
pub mod transcript;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mempalace_core::wake_up::WakeUpRequest;
use mempalace_core::{Cancellation, Palace};
use serde::{Deserialize, Serialize};

pub use answer::HookAnswer;
pub use payload::HookPayload;
pub use settings::HookSettings;
pub use state::HookState;
pub use transcript::{TranscriptFile, TranscriptRefusal};

use crate::mine::{MineOutcome, MineRequest, mine};
use crate::progress::NoProgress;
use project_wing::{diary_wing_for, project_wing};

/// The reason 3.11's legacy (non-silent) stop mode gives the agent.
pub const STOP_BLOCK_REASON: &str = "MemPalace auto-save checkpoint. Use mempalace_diary_write (session summary) and mempalace_add_drawer (quotes, decisions, code) to save session content. Do NOT use native auto-memory files.";

/// A hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hook {
    /// A session starts (or resumes).
    SessionStart,
    /// The agent finished a turn.
    Stop,
    /// The session ends.
    SessionEnd,
    /// The harness is about to compact the context.
    Precompact,
}

impl Hook {
    /// Every hook, in a session's order.
    pub const ALL: [Hook; 4] = [
        Hook::SessionStart,
        Hook::Stop,
        Hook::Precompact,
        Hook::SessionEnd,
    ];

    /// The name on the command line (`session-start`, …).
    pub fn name(self) -> &'static str {
        match self {
            Hook::SessionStart => "session-start",
            Hook::Stop => "stop",
            Hook::SessionEnd => "session-end",
            Hook::Precompact => "precompact",
        }
    }

    /// The harness's name for the event (`SessionStart`, …).
    pub fn event_name(self) -> &'static str {
        match self {
            Hook::SessionStart => "SessionStart",
            Hook::Stop => "Stop",
            Hook::SessionEnd => "SessionEnd",
            Hook::Precompact => "PreCompact",
        }
    }
}

/// The agent harness calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
    /// The DeepSeek harness (Claude Code's transcript shape).
    Dsh,
}

impl Harness {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::Codex => "codex",
            Harness::Dsh => "dsh",
        }
    }

    /// The diary's agent name for checkpoints (3.11's: `claude`, `codex`, `dsh`).
    pub fn diary_agent(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude",
            Harness::Codex => "codex",
            Harness::Dsh => "dsh",
        }
    }
}

/// `~` or `~/…` expanded to the home folder.
pub(crate) fn expand_home(path: &str) -> PathBuf {
    mempalace_core::locations::expand_home(path)
}

/// Filing a session's transcript that a hook leaves to a detached process (session-end).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetachedFiling {
    /// The checked transcript.
    pub transcript: PathBuf,
    /// The session.
    pub session_id: String,
    /// The harness (names the checkpoint's diary agent).
    pub harness: Harness,
    /// The wing its turns go to (as the hook derived it).
    pub wing: String,
    /// The diary wing of its checkpoint.
    pub diary_wing: String,
}

/// What filing a transcript did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "filing", rename_all = "snake_case")]
pub enum TranscriptFiling {
    /// Its new turns were filed.
    Filed {
        /// The wing.
        wing: String,
        /// Turns filed for the first time.
        new_turns: u64,
        /// Drawers written.
        drawers_filed: u64,
        /// The deadline came first: what was filed is whole, the next hook files the rest.
        stopped_at_deadline: bool,
    },
    /// Another hook was filing it; it files these turns.
    Busy,
    /// Filing failed (the reason is logged; the answer does not change).
    Failed {
        /// Why.
        reason: String,
    },
}

/// What one hook call did: its answer, and what it left to do detached.
#[derive(Debug, Clone)]
pub struct HookRun {
    /// What to print.
    pub answer: HookAnswer,
    /// Work to finish in a detached process ([`finish_detached`]).
    pub detached: Option<DetachedFiling>,
    /// The transcript's filing, when this call filed.
    pub filing: Option<TranscriptFiling>,
}

impl HookRun {
    fn answer(answer: HookAnswer) -> Self {
        HookRun {
            answer,
            detached: None,
            filing: None,
        }
    }
}

/// A session's transcript and where its memories go.
struct Session {
    transcript: Option<TranscriptFile>,
    wing: String,
    diary_wing: String,
}

/// The session a payload names. A refused transcript is logged, except a missing one at
/// session start (a new session's transcript may not be written yet).
fn session(
    payload: &HookPayload,
    settings: &HookSettings,
    state: &HookState,
    hook: Hook,
) -> Session {
    let transcript = payload.transcript_path.as_deref().and_then(|raw| {
        TranscriptFile::check(raw, &settings.allowed_roots, settings.max_transcript_bytes)
            .map_err(|e| {
                let not_yet = hook == Hook::SessionStart
                    && matches!(e, TranscriptRefusal::NotARegularFile { .. });
                if !not_yet {
                    state.log(&format!("WARNING: {e}"));
                }
            })
            .ok()
    });
    let folder = transcript
        .as_ref()
        .and_then(TranscriptFile::working_folder)
        .or_else(|| payload.cwd.as_deref().map(transcript::normalize_folder));
    let path_text = transcript
        .as_ref()
        .map(|t| t.path.display().to_string())
        .or_else(|| payload.transcript_path.clone())
        .unwrap_or_default();
    let home = settings.home.display().to_string();
    let wing = project_wing(folder.as_deref(), &path_text, &home);
    let diary_wing = diary_wing_for(folder.as_deref(), &path_text, &home);
    Session {
        transcript,
        wing,
        diary_wing,
    }
}

/// Runs one hook. Never fails: whatever goes wrong is logged to the state folder's
/// `hook.log` and the harness gets a harmless answer.
pub async fn run_hook(
    palace: &Arc<Palace>,
    hook: Hook,
    harness: Harness,
    payload: &HookPayload,
    settings: &HookSettings,
) -> HookRun {
    let Some(state) = opened(payload, settings) else {
        return HookRun::answer(HookAnswer::Nothing);
    };
    match hook {
        Hook::SessionStart => session_start(palace, payload, settings, &state).await,
        Hook::Stop => stop(palace, harness, payload, settings, &state).await,
        Hook::Precompact => precompact(palace, payload, settings, &state).await,
        Hook::SessionEnd => session_end(harness, payload, settings, &state),
    }
}

/// The state of hooks that act (`None` when the kill switch is off), with a payload problem
/// logged.
fn opened(payload: &HookPayload, settings: &HookSettings) -> Option<HookState> {
    if !settings.enabled {
        return None;
    }
    let state = HookState::new(&settings.state_dir);
    if let Some(problem) = &payload.problem {
        state.log(&format!("WARNING: {problem}"));
    }
    Some(state)
}

/// Runs `mine` until `deadline`, then raises its cancellation (what was filed by then is
/// whole); says whether the deadline came.
async fn mine_until(
    palace: &Arc<Palace>,
    request: &MineRequest,
    deadline: Instant,
) -> (crate::Result<MineOutcome>, bool) {
    let cancel = Cancellation::new();
    let timer = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(deadline.into()).await;
            cancel.cancel();
        })
    };
    let outcome = mine(Arc::clone(palace), request, &NoProgress, &cancel).await;
    timer.abort();
    (outcome, cancel.is_cancelled())
}

async fn session_start(
    palace: &Arc<Palace>,
    payload: &HookPayload,
    settings: &HookSettings,
    state: &HookState,
) -> HookRun {
    state.log(&format!("SESSION START for session {}", payload.session_id));
    let s = session(payload, settings, state, Hook::SessionStart);
    match wake_up_context(palace, &s.wing, settings.context_chars).await {
        Ok(Some(text)) => HookRun::answer(HookAnswer::Context {
            event: Hook::SessionStart.event_name().to_string(),
            text,
        }),
        Ok(None) => HookRun::answer(HookAnswer::Nothing),
        Err(e) => {
            state.log(&format!("wake-up failed: {e}"));
            HookRun::answer(HookAnswer::Nothing)
        }
    }
}

/// The wake-up text for a session in `wing` (the whole palace's when the wing has nothing
/// yet), at most `max_chars` characters; `None` when the palace holds nothing.
pub async fn wake_up_context(
    palace: &Palace,
    wing: &str,
    max_chars: usize,
) -> mempalace_core::Result<Option<String>> {
    if !palace.is_initialised().await? {
        return Ok(None);
    }
    let mut woken = palace
        .wake_up(&WakeUpRequest {
            wing: Some(wing.to_string()),
            ..WakeUpRequest::default()
        })
        .await?;
    if woken.drawer_ids.is_empty() {
        woken = palace.wake_up(&WakeUpRequest::default()).await?;
        if woken.drawer_ids.is_empty() {
            return Ok(None);
        }
    }
    let text = woken.text.trim();
    if text.chars().count() <= max_chars {
        return Ok(Some(text.to_string()));
    }
    let cut = "\n[… cut to fit the harness's limit]";
    let keep = max_chars.saturating_sub(cut.chars().count());
    Ok(Some(text.chars().take(keep).collect::<String>() + cut))
}

/// Files the transcript's new turns into `wing`, holding its lock; stops at `deadline` with
/// what it filed whole. `wait` waits for another hook's filing to end instead of leaving it
/// to that hook.
pub async fn file_transcript(
    palace: &Arc<Palace>,
    transcript: &TranscriptFile,
    wing: &str,
    state: &HookState,
    deadline: Instant,
    wait: bool,
) -> TranscriptFiling {
    match lock_transcript(transcript, state, deadline, wait).await {
        Ok(_lock) => file_locked(palace, transcript, wing, state, deadline).await,
        Err(filing) => filing,
    }
}

/// The transcript's lock, or what to report when another hook holds it (or it failed).
async fn lock_transcript(
    transcript: &TranscriptFile,
    state: &HookState,
    deadline: Instant,
    wait: bool,
) -> Result<state::TranscriptLock, TranscriptFiling> {
    let lock = if wait {
        state.lock_by(&transcript.path, deadline).await
    } else {
        state.try_lock(&transcript.path)
    };
    match lock {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => {
            state.log(&format!(
                "Skipping filing: another hook is filing {}",
                transcript.path.display()
            ));
            Err(TranscriptFiling::Busy)
        }
        Err(e) => Err(TranscriptFiling::Failed {
            reason: format!("transcript lock: {e}"),
        }),
    }
}

/// Files the transcript's new turns; the caller holds its lock.
async fn file_locked(
    palace: &Arc<Palace>,
    transcript: &TranscriptFile,
    wing: &str,
    state: &HookState,
    deadline: Instant,
) -> TranscriptFiling {
    // Still the regular, unlinked file that was checked (not swapped since).
    let still_regular = std::fs::symlink_metadata(&transcript.path)
        .is_ok_and(|m| m.file_type().is_file() && m.len() <= transcript.limit());
    if !still_regular {
        return TranscriptFiling::Failed {
            reason: format!("{} changed since it was checked", transcript.path.display()),
        };
    }
    // A transcript keeps the wing it was first filed into (a hook and a sweep may name it
    // differently): its filed turns are known per wing, so a second wing would file them again.
    let source = transcript.path.display().to_string();
    let wing = match palace.conversation_wing(&source).await {
        Ok(Some(earlier)) => earlier,
        _ => wing.to_string(),
    };
    let wing = wing.as_str();
    let mut request = MineRequest::conversations(&transcript.path).wing(wing);
    request.max_file_bytes = Some(transcript.limit());
    let (outcome, deadline_came) = mine_until(palace, &request, deadline).await;
    let filing = match outcome {
        Ok(MineOutcome::Conversations(report)) => TranscriptFiling::Filed {
            wing: report.wing,
            new_turns: report.filed.new_turns,
            drawers_filed: report.filed.drawers_filed,
            stopped_at_deadline: report.interrupted,
        },
        Ok(_) => TranscriptFiling::Failed {
            reason: "not filed as a conversation".to_string(),
        },
        Err(e) if deadline_came => {
            state.log(&format!("filing stopped at the deadline: {e}"));
            TranscriptFiling::Filed {
                wing: wing.to_string(),
                new_turns: 0,
                drawers_filed: 0,
                stopped_at_deadline: true,
            }
        }
        Err(e) => TranscriptFiling::Failed {
            reason: e.to_string(),
        },
    };
    match &filing {
        TranscriptFiling::Filed {
            new_turns,
            drawers_filed,
            stopped_at_deadline,
            ..
        } => state.log(&format!(
            "Transcript filed: {} -> {wing}: {new_turns} new turns, {drawers_filed} drawers{}",
            transcript.path.display(),
            if *stopped_at_deadline {
                " (deadline: the rest next time)"
            } else {
                ""
            }
        )),
        TranscriptFiling::Failed { reason } => {
            state.log(&format!("transcript filing failed: {reason}"))
        }
        TranscriptFiling::Busy => {}
    }
    filing
}

async fn stop(
    palace: &Arc<Palace>,
    harness: Harness,
    payload: &HookPayload,
    settings: &HookSettings,
    state: &HookState,
) -> HookRun {
    if !settings.auto_save {
        return HookRun::answer(HookAnswer::Nothing);
    }
    if payload.stop_hook_active && !settings.silent_save {
        return HookRun::answer(HookAnswer::Nothing);
    }
    let deadline = deadline_after(settings.deadline);
    let s = session(payload, settings, state, Hook::Stop);
    let Some(transcript) = s.transcript else {
        state.log(&format!(
            "Session {}: 0 exchanges, 0 since last save",
            payload.session_id
        ));
        return HookRun::answer(HookAnswer::Nothing);
    };
    // One stop at a time per transcript files it and decides on the checkpoint; another
    // that finds it busy leaves both to that one.
    let _lock = match lock_transcript(&transcript, state, deadline, false).await {
        Ok(lock) => lock,
        Err(filing) => {
            let mut run = HookRun::answer(HookAnswer::Nothing);
            run.filing = Some(filing);
            return run;
        }
    };
    let filing = file_locked(palace, &transcript, &s.wing, state, deadline).await;
    let messages = transcript.read_messages();
    let count = messages.human_messages;
    let since = count as i64 - state.last_save(&payload.session_id) as i64;
    state.log(&format!(
        "Session {}: {count} exchanges, {since} since last save",
        payload.session_id
    ));
    let mut run = HookRun::answer(HookAnswer::Nothing);
    run.filing = Some(filing);
    if since < settings.save_interval as i64 || count == 0 {
        return run;
    }
    state.log(&format!("TRIGGERING SAVE at exchange {count}"));
    let diary = s.diary_wing.clone();
    if !settings.silent_save {
        if let Err(e) = state.set_last_save(&payload.session_id, count) {
            state.log(&format!("WARNING: save marker not written: {e}"));
        }
        run.answer = HookAnswer::Block(format!(
            "{STOP_BLOCK_REASON} Write diary entry to wing={diary}."
        ));
        return run;
    }
    match checkpoint(
        palace,
        harness,
        &payload.session_id,
        &messages.recent,
        &diary,
    )
    .await
    {
        Ok(true) => {
            if let Err(e) = state.set_last_save(&payload.session_id, count) {
                state.log(&format!("WARNING: save marker not written: {e}"));
            }
            let themes = transcript::themes(&messages.recent, 3);
            let tag = if themes.is_empty() {
                String::new()
            } else {
                format!(" — {}", themes.join(", "))
            };
            run.answer = HookAnswer::SystemMessage(format!(
                "✦ 1 checkpoint saved — {} messages woven into the palace{tag}",
                messages.recent.len()
            ));
        }
        Ok(false) => state.log("No recent messages to save"),
        Err(e) => state.log(&format!("Diary checkpoint failed: {e}")),
    }
    run
}

/// Writes 3.11's checkpoint diary entry (`CHECKPOINT:<date>|session:<id>|msgs:<n>|recent:…`)
/// for the recent messages; `false` when there are none.
async fn checkpoint(
    palace: &Palace,
    harness: Harness,
    session_id: &str,
    recent: &[String],
    diary_wing: &str,
) -> mempalace_core::Result<bool> {
    if recent.is_empty() {
        return Ok(false);
    }
    let topics: Vec<String> = recent
        .iter()
        .skip(recent.len().saturating_sub(10))
        .map(|m| m.chars().take(80).collect())
        .collect();
    let entry = format!(
        "CHECKPOINT:{}|session:{session_id}|msgs:{}|recent:{}",
        chrono::Local::now().format("%Y-%m-%d"),
        recent.len(),
        topics.join("|")
    );
    palace
        .diary_write(
            harness.diary_agent(),
            &entry,
            Some("checkpoint"),
            Some(diary_wing),
        )
        .await?;
    Ok(true)
}

async fn precompact(
    palace: &Arc<Palace>,
    payload: &HookPayload,
    settings: &HookSettings,
    state: &HookState,
) -> HookRun {
    if !settings.auto_save {
        return HookRun::answer(HookAnswer::Nothing);
    }
    state.log(&format!(
        "PRE-COMPACT triggered for session {}",
        payload.session_id
    ));
    let deadline = deadline_after(settings.deadline);
    let s = session(payload, settings, state, Hook::Precompact);
    let mut run = HookRun::answer(HookAnswer::Nothing);
    if let Some(transcript) = &s.transcript {
        // Everything must be filed before the context is compacted: wait for a running
        // filing, then file what it left.
        run.filing =
            Some(file_transcript(palace, transcript, &s.wing, state, deadline, true).await);
    }
    if let Some(dir) = &settings.project_dir {
        mine_project_dir(palace, dir, deadline, state).await;
    }
    run
}

/// Mines `$MEMPAL_DIR` (3.11's precompact does too) until `deadline`.
async fn mine_project_dir(palace: &Arc<Palace>, dir: &Path, deadline: Instant, state: &HookState) {
    if let (Err(e), _) = mine_until(palace, &MineRequest::project(dir), deadline).await {
        state.log(&format!("mine hook failed: {e}"));
    }
}

/// What session-end does in the harness's short budget: nothing that needs the palace. It
/// names the work for a detached process ([`finish_detached`]) and answers at once.
pub fn plan_session_end(
    harness: Harness,
    payload: &HookPayload,
    settings: &HookSettings,
) -> HookRun {
    match opened(payload, settings) {
        Some(state) => session_end(harness, payload, settings, &state),
        None => HookRun::answer(HookAnswer::Nothing),
    }
}

fn session_end(
    harness: Harness,
    payload: &HookPayload,
    settings: &HookSettings,
    state: &HookState,
) -> HookRun {
    if !settings.auto_save {
        state.clear_last_save(&payload.session_id);
        return HookRun::answer(HookAnswer::Nothing);
    }
    state.log(&format!("SESSION END for session {}", payload.session_id));
    let s = session(payload, settings, state, Hook::SessionEnd);
    let mut run = HookRun::answer(HookAnswer::Nothing);
    match s.transcript {
        Some(t) => {
            run.detached = Some(DetachedFiling {
                transcript: t.path,
                session_id: payload.session_id.clone(),
                harness,
                wing: s.wing,
                diary_wing: s.diary_wing,
            });
        }
        None => state.clear_last_save(&payload.session_id),
    }
    run
}

/// The detached half of session-end: files the transcript's new turns (waiting for a running
/// filing, without the hook's deadline), writes the session's closing checkpoint and forgets
/// its save marker.
pub async fn finish_detached(
    palace: &Arc<Palace>,
    work: &DetachedFiling,
    settings: &HookSettings,
) -> TranscriptFiling {
    let state = HookState::new(&settings.state_dir);
    let session_id = payload::sanitize_session_id(&work.session_id);
    let raw = work.transcript.display().to_string();
    let transcript =
        match TranscriptFile::check(&raw, &settings.allowed_roots, settings.max_transcript_bytes) {
            Ok(t) => t,
            Err(e) => {
                state.log(&format!("WARNING: {e}"));
                state.clear_last_save(&session_id);
                return TranscriptFiling::Failed {
                    reason: e.to_string(),
                };
            }
        };
    let (wing, diary_wing) = (project_wing::wing_slug(&work.wing), work.diary_wing.clone());
    let deadline = deadline_after(settings.detached_deadline);
    let filing = match lock_transcript(&transcript, &state, deadline, true).await {
        Ok(_lock) => {
            let filing = file_locked(palace, &transcript, &wing, &state, deadline).await;
            let messages = transcript.read_messages();
            if let Err(e) = checkpoint(
                palace,
                work.harness,
                &session_id,
                &messages.recent,
                &diary_wing,
            )
            .await
            {
                state.log(&format!("Diary checkpoint failed: {e}"));
            }
            filing
        }
        Err(filing) => filing,
    };
    state.clear_last_save(&session_id);
    filing
}

/// `now + wait`, or an hour from now when that cannot be told.
pub(crate) fn deadline_after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .or_else(|| now.checked_add(Duration::from_secs(3600)))
        .unwrap_or(now)
}

/// How long a hook may take, by default.
pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_secs(45);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_filing_outcome_serializes() {
        for filing in [
            TranscriptFiling::Busy,
            TranscriptFiling::Failed { reason: "x".into() },
            TranscriptFiling::Filed {
                wing: "w".into(),
                new_turns: 1,
                drawers_filed: 1,
                stopped_at_deadline: false,
            },
        ] {
            let v = serde_json::to_value(&filing).unwrap();
            assert!(v["filing"].is_string(), "{v}");
        }
    }

    #[test]
    fn deadlines_never_overflow() {
        let far = deadline_after(Duration::MAX);
        assert!(far > Instant::now());
    }

    #[test]
    fn a_transcript_swapped_after_its_check_is_not_filed() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join("s.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        let t =
            TranscriptFile::check(path.to_str().unwrap(), &[home.path().into()], 1 << 20).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.jsonl");
        std::fs::write(
            &secret,
            r#"{"type":"user","message":{"role":"user","content":"secret"}}"#,
        )
        .unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&secret, &path).unwrap();
        assert_eq!(t.read_messages(), transcript::SessionMessages::default());
        assert!(t.working_folder().is_none());
    }
}
