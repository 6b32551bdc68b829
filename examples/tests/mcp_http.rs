//! `mempalace mcp --transport http`, end to end: the built binary on the embedded stack,
//! driven by rmcp's streamable-HTTP client and by raw HTTP. The seed's four phases, many
//! clients on one server (nothing lost or duplicated), bearer tokens, read-only mode, body
//! and header limits, TLS, and SIGTERM in the middle of writes.

#[path = "support/palace_processes.rs"]
mod palace_processes;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use palace_processes::{call, fact};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

const TOKEN: &str = "test-token-0123456789abcdef";

fn model_dir() -> PathBuf {
    std::env::var_os("MEMPALACE_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            dirs::home_dir()
                .expect("a home folder")
                .join(".cache/mempalace/models/all-MiniLM-L6-v2")
        })
}

/// `mempalace mcp --transport http` on `palace`, with HOME and config in `home`.
fn server_command(palace: &Path, home: &Path, token: Option<&str>, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    command
        .env("HOME", home)
        .env("MEMPALACE_MODEL_DIR", model_dir())
        .env("MEMPALACE_CONFIG_DIR", home.join(".mempalace"))
        .env_remove("MEMPALACE_MCP_HTTP_TOKEN")
        .env_remove("MEMPALACE_MCP_HTTP_TOKEN_FILE")
        .env_remove("MEMPALACE_MCP_READ_ONLY")
        .arg("--palace")
        .arg(palace)
        .args(["mcp", "--transport", "http", "--port", "0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(token) = token {
        command.env("MEMPALACE_MCP_HTTP_TOKEN", token);
    }
    command
}

/// Creates an empty palace at `palace` (`mempalace init` on an empty project).
async fn create_palace(palace: &Path, home: &Path) {
    let project = home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("HOME", home)
        .env("MEMPALACE_MODEL_DIR", model_dir())
        .env("MEMPALACE_CONFIG_DIR", home.join(".mempalace"))
        .arg("--palace")
        .arg(palace)
        .arg("init")
        .arg(&project)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

/// A running HTTP server process and what it has written to stderr.
struct ServerProcess {
    child: Child,
    url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts the server (creating the palace if there is none) and waits for its
    /// "listening on URL" line.
    async fn start(palace: &Path, home: &Path, token: Option<&str>, extra: &[&str]) -> Self {
        if !palace.exists() {
            create_palace(palace, home).await;
        }
        let mut child = server_command(palace, home, token, extra)
            .spawn()
            .expect("spawn mempalace mcp --transport http");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let url = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                stderr.lock().unwrap().push(line.clone());
                if let Some(url) = line.split("listening on ").nth(1) {
                    return url.trim().trim_end_matches(" (read-only)").to_string();
                }
            }
            panic!("server exited: {:?}", stderr.lock().unwrap());
        })
        .await
        .expect("server announces its address");
        let sink = Arc::clone(&stderr);
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().unwrap().push(line);
            }
        });
        ServerProcess { child, url, stderr }
    }

    fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }

    /// Sends SIGTERM and waits for the process to end; its exit code and stderr.
    async fn terminate(mut self) -> (Option<i32>, Vec<String>) {
        let pid = self.child.id().expect("running") as i32;
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let status = tokio::time::timeout(Duration::from_secs(90), self.child.wait())
            .await
            .expect("server stops after SIGTERM")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let stderr = self.stderr.lock().unwrap().clone();
        (status.code(), stderr)
    }
}

/// An MCP client session over streamable HTTP.
async fn connect(url: &str, token: Option<&str>) -> RunningService<RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport).await.expect("initialize over HTTP")
}

/// The JSON-RPC `initialize` request, as raw HTTP clients send it.
fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}
        }
    })
    .to_string()
}

fn raw_post(client: &reqwest::Client, url: &str, body: String) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_phases_and_many_clients_over_http_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let server = ServerProcess::start(&palace, dir.path(), Some(TOKEN), &[]).await;

    // The seed's four phases: status → search → kg_query → add_drawer (+ its duplicate check).
    let first = connect(&server.url, Some(TOKEN)).await;
    let status = call(first.peer(), "mempalace_status", json!({}))
        .await
        .unwrap();
    assert!(status["protocol"].as_str().is_some(), "{status}");
    call(
        first.peer(),
        "mempalace_search",
        json!({"query": "what do we know"}),
    )
    .await
    .unwrap();
    call(
        first.peer(),
        "mempalace_kg_add",
        json!({"subject": "Max", "predicate": "works_on", "object": "Orion"}),
    )
    .await
    .unwrap();
    let facts = call(first.peer(), "mempalace_kg_query", json!({"entity": "Max"}))
        .await
        .unwrap();
    assert!(facts.to_string().contains("Orion"), "{facts}");
    let filed = call(
        first.peer(),
        "mempalace_add_drawer",
        json!({"wing": "wing_http", "room": "notes", "content": fact(7)}),
    )
    .await
    .unwrap();
    assert_eq!(filed["success"], true, "{filed}");
    let found = call(
        first.peer(),
        "mempalace_search",
        json!({"query": fact(7), "limit": 1}),
    )
    .await
    .unwrap();
    assert!(found.to_string().contains(&fact(7)), "{found}");

    // Eight clients at once: each files 12 facts of its own and the same 6 shared facts.
    let (clients, own, shared) = (8usize, 12usize, 6usize);
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(connect(&server.url, Some(TOKEN)).await);
    }
    let runs = sessions.iter().enumerate().map(|(c, session)| {
        let peer = session.peer().clone();
        async move {
            let jobs: Vec<(bool, usize)> = (0..own)
                .map(|i| (false, i))
                .chain((0..shared).map(|i| (true, (i + c) % shared)))
                .collect();
            futures::stream::iter(jobs)
                .map(|(is_shared, i)| {
                    let peer = peer.clone();
                    async move {
                        let (wing, content) = if is_shared {
                            ("wing_shared".to_string(), fact(100 + i as u64))
                        } else {
                            (
                                format!("wing_c{c}"),
                                fact(10_000 * (c as u64 + 1) + i as u64),
                            )
                        };
                        let answer = call(
                            &peer,
                            "mempalace_add_drawer",
                            json!({"wing": wing, "room": "facts", "content": content}),
                        )
                        .await;
                        (is_shared, i, answer)
                    }
                })
                .buffer_unordered(4)
                .collect::<Vec<_>>()
                .await
        }
    });
    let answers: Vec<_> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flatten()
        .collect();
    let mut shared_filed = vec![0; shared];
    for (is_shared, i, answer) in &answers {
        let v = answer
            .as_ref()
            .unwrap_or_else(|e| panic!("add_drawer failed: {e}"));
        match (v["success"].as_bool(), is_shared) {
            (Some(true), true) => shared_filed[*i] += 1,
            (Some(true), false) => {}
            (Some(false), true) if v["reason"] == "duplicate" => {}
            _ => panic!("unexpected answer: {v}"),
        }
    }
    assert_eq!(
        shared_filed,
        vec![1; shared],
        "each shared fact filed exactly once"
    );
    for session in &sessions {
        let status = call(session.peer(), "mempalace_status", json!({}))
            .await
            .unwrap();
        assert_eq!(
            status["total_drawers"].as_u64(),
            Some((1 + clients * own + shared) as u64),
            "{status}"
        );
    }
    for session in sessions {
        let _ = session.cancel().await;
    }
    let _ = first.cancel().await;
    let (code, stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{stderr:?}");
    // The access log names requests, never their bodies or tokens.
    let log = stderr.join("\n");
    assert!(log.contains("mempalace::http::access"), "{log}");
    assert!(!log.contains(TOKEN) && !log.contains("Remember:"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_bodies_and_health_are_checked_at_the_door() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let server = ServerProcess::start(
        &palace,
        dir.path(),
        Some(TOKEN),
        &["--max-body-bytes", "65536"],
    )
    .await;
    let http = reqwest::Client::new();

    // Health needs no token and says nothing about the palace.
    let health = http
        .get(format!("{}/healthz", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok\n");

    // No token, a wrong token, the wrong scheme: 401 with nothing to learn from.
    for authorization in [
        None,
        Some(format!("Bearer {TOKEN}x")),
        Some("Bearer ".to_string()),
        Some(format!("Basic {TOKEN}")),
    ] {
        let mut request = raw_post(&http, &server.url, initialize_body());
        if let Some(value) = &authorization {
            request = request.header("authorization", value);
        }
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), 401, "{authorization:?}");
        assert_eq!(answer.headers()["www-authenticate"], "Bearer");
        assert!(answer.text().await.unwrap().is_empty());
    }

    // The right token opens a session.
    let answer = raw_post(&http, &server.url, initialize_body())
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);

    // A body over the limit is refused with 413, before any tool runs.
    let huge = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "mempalace_add_drawer",
                   "arguments": {"wing": "w", "room": "r", "content": "x".repeat(100_000)}}
    })
    .to_string();
    let answer = raw_post(&http, &server.url, huge)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 413);

    // Malformed JSON-RPC gets an error answer, not a dead server.
    let answer = raw_post(&http, &server.url, "{not json".into())
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert!(answer.status().is_client_error(), "{}", answer.status());

    // Unknown paths are 404; the server still answers afterwards.
    let answer = http
        .get(format!("{}/admin", server.base()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 404);
    let session = connect(&server.url, Some(TOKEN)).await;
    let status = call(session.peer(), "mempalace_status", json!({})).await;
    assert!(status.is_ok(), "{status:?}");
    let _ = session.cancel().await;
    let (code, stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{stderr:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_parse_errors_and_session_ends_answer_as_the_specification_says() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let server = ServerProcess::start(
        &palace,
        dir.path(),
        Some(TOKEN),
        &["--allowed-origin", "https://app.example"],
    )
    .await;
    let http = reqwest::Client::new();
    let initialize = |origin: Option<&str>| {
        let mut request = raw_post(&http, &server.url, initialize_body()).bearer_auth(TOKEN);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };

    // A page on another site (DNS rebinding, or a browser tab) cannot open a session, even
    // with the token.
    for foreign in [
        "http://evil.example",
        "null",
        "http://127.0.0.1:1",
        "not an origin",
        // The allowed page on another port is another origin.
        "https://app.example:8443",
    ] {
        let answer = initialize(Some(foreign)).await.unwrap();
        assert_eq!(answer.status(), 403, "{foreign}");
        assert!(
            answer.headers().get("mcp-session-id").is_none(),
            "{foreign}"
        );
    }
    // The server's own origin, an allowed one, and no Origin at all (every non-browser
    // client) open sessions.
    let own = server.base();
    for origin in [Some(own.as_str()), Some("https://app.example"), None] {
        let answer = initialize(origin).await.unwrap();
        assert_eq!(answer.status(), 200, "{origin:?}");
    }
    let answer = initialize(None).await.unwrap();
    let session = answer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();

    // A body that is not JSON is a bad request with JSON-RPC's parse error; 415 is kept for
    // a body that is not declared as JSON.
    let answer = raw_post(&http, &server.url, "{not json".into())
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32700, "{body}");
    let answer = http
        .post(&server.url)
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(TOKEN)
        .body(initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 415);

    // Ending a session answers 204 No Content (clients expect 200 or 204).
    let answer = http
        .delete(&server.url)
        .bearer_auth(TOKEN)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 204);

    // The access log reaches a pipe as plain text, without terminal colour codes.
    let (code, stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{stderr:?}");
    let log = stderr.join("\n");
    assert!(log.contains("mempalace::http::access"), "{log}");
    assert!(!log.contains('\u{1b}'), "{log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_configurations_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let refused = |extra: &'static [&'static str], token: Option<&'static str>| {
        let mut command = server_command(&palace, dir.path(), token, extra);
        async move {
            let output = tokio::time::timeout(Duration::from_secs(60), command.output())
                .await
                .expect("refused at once")
                .unwrap();
            assert!(!output.status.success(), "{extra:?} started");
            String::from_utf8_lossy(&output.stderr).to_string()
        }
    };
    // Anything but loopback without a token.
    let err = refused(&["--host", "0.0.0.0"], None).await;
    assert!(err.contains("without a bearer token"), "{err}");
    // A token too short to resist guessing.
    let err = refused(&[], Some("hunter2")).await;
    assert!(err.contains("at least 16"), "{err}");
    // An allowed origin that is not one.
    let err = refused(&["--allowed-origin", "app.example"], None).await;
    assert!(err.contains("is not an origin"), "{err}");
    // A token file that is not there.
    let err = refused(&["--token-file", "/nonexistent/token"], None).await;
    assert!(err.contains("/nonexistent/token"), "{err}");
    // TLS files that are not PEM.
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate").unwrap();
    let mut command = server_command(&palace, dir.path(), None, &[]);
    command
        .arg("--tls-cert")
        .arg(&junk)
        .arg("--tls-key")
        .arg(&junk);
    let output = command.output().await.unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("certificate") && err.contains("junk.pem"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_server_offers_and_runs_no_write_tool() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let server = ServerProcess::start(&palace, dir.path(), None, &["--read-only"]).await;
    assert!(
        server
            .stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.ends_with("(read-only)")),
        "the server does not say it is read-only"
    );
    let session = connect(&server.url, None).await;
    let tools = session.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"mempalace_search") && names.contains(&"mempalace_status"));
    // 3.11's read-only refusal set: its 20 mutating tools plus hook_settings and
    // memories_filed_away (mempalace/mcp_server/_guards.py).
    let refused_by_3_11 = [
        "mempalace_kg_add",
        "mempalace_kg_invalidate",
        "mempalace_kg_supersede",
        "mempalace_create_tunnel",
        "mempalace_delete_tunnel",
        "mempalace_delete_hallway",
        "mempalace_add_drawer",
        "mempalace_delete_drawer",
        "mempalace_delete_drawers",
        "mempalace_checkpoint",
        "mempalace_delete_by_source",
        "mempalace_mine",
        "mempalace_sync",
        "mempalace_update_drawer",
        "mempalace_diary_write",
        "mempalace_event_append",
        "mempalace_task_create",
        "mempalace_event_ack",
        "mempalace_artifact_put",
        "mempalace_patch_submit",
        "mempalace_hook_settings",
        "mempalace_memories_filed_away",
    ];
    for tool in refused_by_3_11 {
        assert!(
            !names.contains(&tool),
            "{tool} is listed by a read-only server"
        );
    }
    assert_eq!(names.len(), 47 - refused_by_3_11.len(), "{names:?}");
    let err = call(
        session.peer(),
        "mempalace_add_drawer",
        json!({"wing": "w", "room": "r", "content": "must not be filed"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("-32003") && err.contains("read-only"), "{err}");
    let status = call(session.peer(), "mempalace_status", json!({})).await;
    assert!(status.is_ok(), "{status:?}");
    let _ = session.cancel().await;
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_is_cut_off_without_holding_up_others() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let server = ServerProcess::start(&palace, dir.path(), None, &["--header-timeout", "1"]).await;
    let address = server.base().trim_start_matches("http://").to_string();
    // A client that starts a request and never finishes its headers.
    let mut slow = tokio::net::TcpStream::connect(&address).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    // Everyone else is served meanwhile.
    let session = connect(&server.url, None).await;
    let status = call(session.peer(), "mempalace_status", json!({})).await;
    assert!(status.is_ok(), "{status:?}");
    // And the slow one is closed once its time is up.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut rest)).await;
    assert!(
        closed.is_ok(),
        "the stalled connection is still open after 10 s"
    );
    let _ = session.cancel().await;
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_in_the_middle_of_writes_loses_no_acknowledged_drawer() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let server = ServerProcess::start(&palace, dir.path(), None, &[]).await;
    let writers = 4usize;
    let per_writer = 40usize;
    let mut sessions = Vec::new();
    for _ in 0..writers {
        sessions.push(connect(&server.url, None).await);
    }
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let runs = sessions.iter().enumerate().map(|(w, session)| {
        let peer = session.peer().clone();
        let acknowledged = Arc::clone(&acknowledged);
        async move {
            let mut refused = 0;
            for i in 0..per_writer {
                let answer = call(
                    &peer,
                    "mempalace_add_drawer",
                    json!({"wing": "wing_sigterm", "room": format!("w{w}"),
                           "content": fact(50_000 * (w as u64 + 1) + i as u64)}),
                )
                .await;
                match answer {
                    Ok(v) if v["success"] == true => acknowledged
                        .lock()
                        .unwrap()
                        .push(v["drawer_id"].as_str().unwrap().to_string()),
                    Ok(v) => panic!("unexpected answer {v}"),
                    Err(_) => refused += 1,
                }
            }
            refused
        }
    });
    let writing = futures::future::join_all(runs);
    let stop = async {
        // Terminate once a handful of writes have been acknowledged.
        while acknowledged.lock().unwrap().len() < 12 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        server.terminate().await
    };
    let (refused, (code, stderr)) = tokio::join!(writing, stop);
    assert_eq!(code, Some(0), "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("every tool call finished")),
        "{stderr:?}"
    );
    let refused: usize = refused.iter().sum();
    assert!(
        refused > 0,
        "SIGTERM came after every write; the test proves nothing"
    );
    let acknowledged = acknowledged.lock().unwrap().clone();

    // A new server on the same palace holds every acknowledged drawer, once.
    let server = ServerProcess::start(&palace, dir.path(), None, &[]).await;
    let session = connect(&server.url, None).await;
    for id in &acknowledged {
        let drawer = call(
            session.peer(),
            "mempalace_get_drawer",
            json!({"drawer_id": id}),
        )
        .await;
        assert!(
            drawer.is_ok(),
            "acknowledged drawer {id} is missing: {drawer:?}"
        );
    }
    let status = call(session.peer(), "mempalace_status", json!({}))
        .await
        .unwrap();
    let total = status["total_drawers"].as_u64().unwrap() as usize;
    assert!(
        total >= acknowledged.len() && total <= writers * per_writer,
        "{total} drawers for {} acknowledged",
        acknowledged.len()
    );
    let _ = session.cancel().await;
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_certificate_from_files() {
    use rustls_pki_types::CertificateDer;
    use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let issued =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, issued.cert.pem()).unwrap();
    std::fs::write(&key, issued.signing_key.serialize_pem()).unwrap();
    let server = ServerProcess::start(
        &palace,
        dir.path(),
        Some(TOKEN),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    )
    .await;
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let address = server
        .url
        .trim_start_matches("https://")
        .trim_end_matches("/mcp")
        .to_string();

    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(issued.cert.der().to_vec()))
        .unwrap();
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(&address).await.unwrap();
    let mut tls = connector
        .connect("localhost".try_into().unwrap(), tcp)
        .await
        .expect("TLS handshake with the server's certificate");
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    tls.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("ok\n"), "{answer}");

    // Plain HTTP to the TLS port gets no answer from the MCP endpoint.
    let plain = reqwest::Client::new()
        .get(format!("http://{address}/healthz"))
        .timeout(Duration::from_secs(15))
        .send()
        .await;
    assert!(plain.is_err() || plain.unwrap().status() != 200);
    let (code, stderr) = server.terminate().await;
    assert_eq!(code, Some(0), "{stderr:?}");
}
