//! `mempalace mcp` typed at a terminal prints how to register the server (as 3.11's `mcp`
//! does) and exits; started by a client (stdin not a terminal) it serves, as before.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A pseudo-terminal: (controller, the terminal end a child reads as stdin).
fn pty() -> (OwnedFd, OwnedFd) {
    let (mut controller, mut terminal) = (-1, -1);
    // SAFETY: openpty writes two new descriptors into the out-parameters; the null pointers
    // ask for no name, termios or window size.
    let rc = unsafe {
        libc::openpty(
            &mut controller,
            &mut terminal,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    unsafe {
        (
            OwnedFd::from_raw_fd(controller),
            OwnedFd::from_raw_fd(terminal),
        )
    }
}

#[test]
fn mcp_at_a_terminal_prints_the_client_setup_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("my palace");
    let (_controller, terminal) = pty();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("HOME", dir.path())
        .arg("--palace")
        .arg(&palace)
        .args(["--backend", "lancedb", "mcp", "--read-only"])
        .stdin(Stdio::from(terminal))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    let text = String::from_utf8(out.stdout).unwrap();
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_mempalace")).unwrap();
    let bin = bin.display();
    assert!(
        text.contains(&format!(
            "claude mcp add mempalace -- {bin} mcp --palace '{}' --backend lancedb --read-only",
            palace.display()
        )),
        "{text}"
    );
    assert!(text.contains("codex mcp add mempalace -- "), "{text}");
    assert!(
        text.contains("hook install --harness claude-code"),
        "{text}"
    );
    assert!(!palace.exists(), "printing the setup opens no palace");
}

#[test]
fn mcp_with_a_client_on_stdin_serves() {
    let dir = tempfile::tempdir().unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("HOME", dir.path())
        .arg("--palace")
        .arg(dir.path().join("palace"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{request}").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("\"serverInfo\""), "{text}");
}
