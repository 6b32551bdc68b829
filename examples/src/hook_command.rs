//! What `mempalace hook` needs of a process that only a binary has: the hook's JSON read from
//! stdin (bounded), and the detached process that finishes a session-end.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use mempalace::ingest::hooks::payload::MAX_PAYLOAD_BYTES;
use mempalace::ingest::hooks::{DetachedFiling, HookPayload, HookState};

/// The payload on stdin: at most [`MAX_PAYLOAD_BYTES`] and one byte more are read (so an
/// oversized payload is seen as such, not read whole).
pub fn read_payload() -> HookPayload {
    let mut bytes = Vec::new();
    let limit = (MAX_PAYLOAD_BYTES + 1) as u64;
    match std::io::stdin().lock().take(limit).read_to_end(&mut bytes) {
        Ok(_) => HookPayload::parse(&bytes),
        Err(e) => HookPayload {
            problem: Some(format!("stdin could not be read ({e}); read as {{}}")),
            ..HookPayload::default()
        },
    }
}

/// Starts `program [forwarded args] hook finish <work as JSON>` in its own process group, its
/// output appended to the hooks' log, and does not wait for it: the harness's session-end
/// budget is short, filing may not be.
pub fn spawn_detached(
    program: &Path,
    forwarded: &[String],
    work: &DetachedFiling,
    state: &HookState,
) -> std::io::Result<u32> {
    use std::os::unix::process::CommandExt;
    let json = serde_json::to_string(work).map_err(std::io::Error::other)?;
    let log = std::fs::create_dir_all(state.dir()).and_then(|_| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(state.dir().join("hook.log"))
    });
    let stderr = match log {
        Ok(f) => Stdio::from(f),
        Err(_) => Stdio::null(),
    };
    let child = Command::new(program)
        .args(forwarded)
        .args(["hook", "finish", &json])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .spawn()?;
    Ok(child.id())
}
