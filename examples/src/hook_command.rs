//! What `mempalace hook` needs of a process that only a binary has: the hook's JSON read from
//! stdin (bounded), and the detached process that finishes a session-end.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use mempalace::ingest::hooks::payload::MAX_PAYLOAD_BYTES;
use mempalace::ingest::hooks::{DetachedFiling, HookAnswer, HookPayload, HookState};

/// What a detached process is given to open the same palace: global flags, and environment
/// variables for settings that may be secret.
#[derive(Debug, Clone, Default)]
pub struct Forwarded {
    /// `--name=value` flags.
    pub args: Vec<OsString>,
    /// Variables set for the child.
    pub env: Vec<(String, String)>,
}

/// Prints a hook's answer; a closed stdout is not an error worth dying for.
pub fn print_answer(answer: &HookAnswer) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(answer.to_json().as_bytes());
    let _ = out.flush();
}

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
    forwarded: &Forwarded,
    work: &DetachedFiling,
    state: &HookState,
) -> std::io::Result<u32> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::process::CommandExt;
    let json = serde_json::to_string(work).map_err(std::io::Error::other)?;
    state.log("starting the detached filing");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(state.dir().join("hook.log"));
    let stderr = match log {
        Ok(f) => Stdio::from(f),
        Err(_) => Stdio::null(),
    };
    let mut command = Command::new(program);
    command
        .args(&forwarded.args)
        .args(["hook", "finish", &json])
        .envs(forwarded.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent: the child
    // leaves the harness's session, so it outlives the hook and its terminal.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = command.spawn()?;
    Ok(child.id())
}
