//! Malformed input on the MCP server's stdin: broken JSON, a batch, missing and mistyped
//! arguments, a 10 MB content string. Every request is answered, the server stays alive, and
//! nothing bad is stored.

use std::time::Duration;

#[path = "support/palace_processes.rs"]
mod palace_processes;

use palace_processes::fact;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};

struct Server {
    child: tokio::process::Child,
    stdin: ChildStdin,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

impl Server {
    async fn start(palace: &std::path::Path) -> Server {
        let mut s = Server::spawn(palace);
        s.initialize().await;
        s
    }

    /// Starts the server without the MCP handshake.
    fn spawn(palace: &std::path::Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mempalace"))
            .arg("--palace")
            .arg(palace)
            .arg("mcp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Server {
            child,
            stdin,
            stdout,
        }
    }

    /// The MCP handshake: initialize, then the initialized notification.
    async fn initialize(&mut self) {
        let s = self;
        s.send_line(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}).to_string()).await;
        let init = s.next().await;
        assert_eq!(init["id"], 0, "{init}");
        s.send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
    }

    async fn send_line(&mut self, line: &str) {
        self.send_bytes(line.as_bytes()).await;
    }

    /// Sends raw bytes (not necessarily UTF-8) as one line.
    async fn send_bytes(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The server process's peak resident memory (VmHWM), in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let pid = self.child.id().expect("the server is running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("VmHWM in /proc/<pid>/status")
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(120), self.stdout.next_line())
            .await
            .expect("the server answers")
            .unwrap()
            .expect("the server is alive");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line}"))
    }

    async fn request(&mut self, id: u64, tool: &str, args: Value) -> Value {
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}).to_string())
            .await;
        let v = self.next().await;
        assert_eq!(v["id"], id, "{v}");
        v
    }

    /// Calls a tool that must succeed and returns its JSON result.
    async fn tool_result(&mut self, id: u64, tool: &str, args: Value) -> Value {
        let v = self.request(id, tool, args).await;
        let text = v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool} answers a result: {v}"));
        serde_json::from_str(text).unwrap()
    }
}

/// The message of a tool that ran and failed, as MemPalace 3.11 answers one: a result whose
/// text is `{"error": message}`, flagged `isError`.
fn tool_failure(answer: &Value) -> String {
    assert_eq!(
        answer["result"]["isError"], true,
        "a tool failure: {answer}"
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let payload: Value = serde_json::from_str(text).unwrap();
    let message = payload["error"].as_str().unwrap().to_string();
    assert!(!message.is_empty(), "{answer}");
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_malformed_request_is_answered_and_the_server_survives() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(&dir.path().join("palace")).await;

    for broken in [
        "{not json",
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
        "\u{1}\u{2}",
        "{\"s\": \"\\ud800\"}",
    ] {
        s.send_line(broken).await;
        let v = s.next().await;
        assert_eq!(v["error"]["code"], -32700, "{broken:?} → {v}");
    }
    s.send_line(&json!([{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]).to_string())
        .await;
    let v = s.next().await;
    assert_eq!(
        v["error"]["code"], -32600,
        "a batch gets Invalid Request: {v}"
    );

    let missing = s
        .request(3, "mempalace_add_drawer", json!({"wing": "w"}))
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let mistyped = s
        .request(4, "mempalace_search", json!({"query": "q", "limit": "ten"}))
        .await;
    assert_eq!(mistyped["error"]["code"], -32602);
    let negative = s
        .request(5, "mempalace_search", json!({"query": "q", "limit": -3}))
        .await;
    assert_eq!(negative["error"]["code"], -32602);
    let unknown = s.request(6, "rm_rf", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601);
    let huge = "x".repeat(10 * 1024 * 1024);
    let big = s
        .request(
            7,
            "mempalace_add_drawer",
            json!({"wing": "w", "room": "r", "content": huge}),
        )
        .await;
    assert!(
        tool_failure(&big).contains("content"),
        "a 10 MB drawer is refused with a message: {big}"
    );
    let empty = s
        .request(
            8,
            "mempalace_add_drawer",
            json!({"wing": "w", "room": "r", "content": "  "}),
        )
        .await;
    tool_failure(&empty);

    // Raw bytes that are not UTF-8, and a line over the size cap: parse errors, no exit.
    s.send_bytes(b"\xff\xfe{\"jsonrpc\":\"2.0\",\"id\":11}\xc3\x28")
        .await;
    let v = s.next().await;
    assert_eq!(v["error"]["code"], -32700, "{v}");
    let oversized = vec![b'x'; mempalace::mcp::stdio_guard::MAX_LINE_BYTES + 1];
    s.send_bytes(&oversized).await;
    let v = s.next().await;
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("exceeds"),
        "{v}"
    );
    // A misspelt argument names itself instead of silently widening the search.
    let typo = s
        .request(
            12,
            "mempalace_search",
            json!({"query": "fox", "wnig": "nope"}),
        )
        .await;
    assert_eq!(typo["error"]["code"], -32602, "{typo}");
    assert!(
        typo["error"]["message"].as_str().unwrap().contains("wnig"),
        "{typo}"
    );
    // Dates far outside 0000-9999 are refused, not a panic that leaves the call unanswered.
    for (id, at) in [
        (13, "-262143-01-01T00:00:00"),
        (14, "+262143-12-31"),
        (15, "0000-01-01"),
    ] {
        let v = s
            .request(
                id,
                "mempalace_kg_supersede",
                json!({"subject": "a", "predicate": "p", "old_object": "b", "new_object": "c", "at": at}),
            )
            .await;
        tool_failure(&v);
    }
    // A huge source_file is refused (it would be echoed by every search).
    let v = s
        .request(
            16,
            "mempalace_add_drawer",
            json!({"wing": "w", "room": "r", "content": "fine", "source_file": "s".repeat(5_000_000)}),
        )
        .await;
    tool_failure(&v);

    // Still alive, and nothing was stored.
    let payload = s.tool_result(9, "mempalace_status", json!({})).await;
    assert_eq!(payload["error"], "No palace found", "{payload}");
    drop(s.stdin);
    let exit = tokio::time::timeout(Duration::from_secs(30), s.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(
        exit.success(),
        "the server exits cleanly when its input closes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_before_initialize_do_not_end_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::spawn(&dir.path().join("palace"));
    // A notification and a stray response before initialize: dropped, the session goes on.
    s.send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .await;
    s.send_line(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
            .to_string(),
    )
    .await;
    s.send_line(&json!({"jsonrpc": "2.0", "id": 77, "result": {}}).to_string())
        .await;
    // A ping before initialize is answered.
    s.send_line(&json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}).to_string())
        .await;
    let pong = s.next().await;
    assert_eq!(pong["id"], "p", "{pong}");
    s.initialize().await;
    let status = s.tool_result(1, "mempalace_status", json!({})).await;
    assert_eq!(status["error"], "No palace found", "{status}");
    drop(s.stdin);
    let exit = tokio::time::timeout(Duration::from_secs(30), s.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success());
}

/// What a generated line must be answered with.
enum Expect {
    /// A parse error (-32700) with a null id.
    ParseError,
    /// An error with a null id (the line has no usable id) and this code.
    ErrorWithoutId(i64),
    /// An error with this id and this code.
    Error(u64, i64),
    /// Any answer (result or error) with this id.
    AnyAnswer(u64),
}

/// A JSON value of a type other than string, so a required string argument never fits.
fn wrong_type(rng: &mut StdRng) -> Value {
    match rng.random_range(0..6) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(rng.random::<i64>()),
        3 => json!(rng.random::<f64>() * 1e300),
        4 => json!([1, "two", {"three": [3]}]),
        _ => json!({"nested": {"deeper": ["x"]}}),
    }
}

fn long_string(rng: &mut StdRng) -> String {
    let unit = ["a", "é", "李", "🙂", "\"", "\\", "\u{0}", "\u{202e}"][rng.random_range(0..8)];
    let n = if rng.random_bool(0.02) {
        1_000_000
    } else {
        rng.random_range(1..20_000)
    };
    unit.repeat(n)
}

/// The tools the server lists, from an in-process server over an empty palace.
fn catalog() -> Vec<rmcp::model::Tool> {
    use mempalace_conformance::HashingEmbedder;
    use mempalace_core::{MemoryStore, Palace};
    let palace = Palace::new(
        "/nonexistent",
        std::sync::Arc::new(HashingEmbedder::new(8)),
        std::sync::Arc::new(MemoryStore::new(8)),
        std::sync::Arc::new(mempalace_kg_sqlite::SqliteKnowledgeGraph::in_memory()),
    )
    .unwrap();
    mempalace::mcp::MemPalaceServer::new(std::sync::Arc::new(palace))
        .tools()
        .into_iter()
        // Mining a folder named by a generated argument is not this test's business.
        .filter(|t| t.name != "mempalace_mine")
        .collect()
}

/// One generated request line and what it must get back.
fn generated_line(rng: &mut StdRng, id: u64, tools: &[(String, Vec<String>)]) -> (String, Expect) {
    let call = |name: &str, args: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
            .to_string()
    };
    match rng.random_range(0..11) {
        // A real tool with one unknown (misspelt) argument.
        10 => {
            let (name, required) = &tools[rng.random_range(0..tools.len())];
            let mut args = serde_json::Map::new();
            for field in required {
                args.insert(field.clone(), json!("plausible value"));
            }
            args.insert(format!("x{}", rng.random::<u16>()), json!("typo"));
            (call(name, Value::Object(args)), Expect::Error(id, -32602))
        }
        // Broken JSON: a strict prefix of a valid request.
        0 => {
            let full = call("mempalace_search", json!({"query": "where is the config"}));
            let cut = rng.random_range(1..full.len());
            (full[..cut].to_string(), Expect::ParseError)
        }
        // A lone surrogate escape inside a string.
        1 => {
            let escape = ["\\ud800", "\\udfff", "\\ud83d", "\\udc00x"][rng.random_range(0..4)];
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"mempalace_search","arguments":{{"query":"a{escape}b"}}}}}}"#
                ),
                Expect::ParseError,
            )
        }
        // Deep nesting, far past any recursion limit.
        2 => {
            let depth = rng.random_range(200..20_000);
            let args = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"mempalace_status","arguments":{args}}}}}"#
                ),
                Expect::ParseError,
            )
        }
        // A tool with a required argument missing or of the wrong type.
        3 | 4 => {
            let with_required: Vec<&(String, Vec<String>)> =
                tools.iter().filter(|(_, r)| !r.is_empty()).collect();
            let (name, required) = with_required[rng.random_range(0..with_required.len())];
            let mut args = serde_json::Map::new();
            for field in required {
                args.insert(field.clone(), json!("plausible value"));
            }
            let victim = &required[rng.random_range(0..required.len())];
            if rng.random_bool(0.5) {
                args.remove(victim);
            } else {
                args.insert(victim.clone(), wrong_type(rng));
            }
            (call(name, Value::Object(args)), Expect::Error(id, -32602))
        }
        // Negative, fractional and enormous limits.
        5 => {
            let limit = [json!(-1), json!(-1e9), json!(2.5), json!(1e30), json!(u64::MAX), json!("5")]
                [rng.random_range(0..6)]
                .clone();
            let (name, field) = [
                ("mempalace_search", "limit"),
                ("mempalace_list_drawers", "limit"),
                ("mempalace_kg_timeline", "offset"),
                ("mempalace_diary_read", "last_n"),
            ][rng.random_range(0..4)];
            let mut args = json!({"query": "q", "agent_name": "a"});
            args[field] = limit;
            (call(name, args), Expect::Error(id, -32602))
        }
        // Unknown tools, some very long.
        6 => {
            let name = if rng.random_bool(0.2) {
                long_string(rng)
            } else {
                format!("mempalace_{}", rng.random::<u32>())
            };
            (call(&name, json!({})), Expect::Error(id, -32601))
        }
        // Huge strings in read-only tools: answered either way.
        7 => {
            let text = long_string(rng);
            let (name, args) = [
                ("mempalace_search", json!({"query": text, "wing": "w"})),
                ("mempalace_check_duplicate", json!({"content": text})),
                ("mempalace_kg_query", json!({"entity": text})),
                ("mempalace_get_drawer", json!({"drawer_id": text})),
            ][rng.random_range(0..4)]
            .clone();
            (call(name, args), Expect::AnyAnswer(id))
        }
        // Not a request object, or params of the wrong shape.
        8 => match rng.random_range(0..4) {
            0 => (json!([1, 2, 3]).to_string(), Expect::ErrorWithoutId(-32600)),
            1 => (json!("just a string").to_string(), Expect::ErrorWithoutId(-32600)),
            2 => (
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": 5}).to_string(),
                Expect::Error(id, -32602),
            ),
            _ => (
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": ["x"]}})
                    .to_string(),
                Expect::Error(id, -32602),
            ),
        },
        // Unknown methods.
        _ => (
            json!({"jsonrpc": "2.0", "id": id, "method": format!("palace/{}", rng.random::<u16>()), "params": {}})
                .to_string(),
            Expect::AnyAnswer(id),
        ),
    }
}

/// The parts of the palace a refused request must not change.
async fn palace_state(s: &mut Server, id: u64) -> (Value, Value) {
    let status = s.tool_result(id, "mempalace_status", json!({})).await;
    let stats = s.tool_result(id + 1, "mempalace_kg_stats", json!({})).await;
    (
        json!([status["total_drawers"], status["wings"], status["rooms"]]),
        stats,
    )
}

/// The stated bound on the server's peak resident memory through the hostile run.
const PEAK_RSS_BOUND_MIB: u64 = 768;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_generated_bad_requests_are_answered_and_change_nothing() {
    const REQUESTS: u64 = 3_000;
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(&dir.path().join("palace")).await;
    let filed = s
        .tool_result(
            1,
            "mempalace_add_drawer",
            json!({"wing": "w", "room": "r", "content": "The staging database is rebuilt every Sunday night."}),
        )
        .await;
    assert_eq!(filed["success"], true, "{filed}");
    let kg = s
        .tool_result(
            2,
            "mempalace_kg_add",
            json!({"subject": "Clerk", "predicate": "replaces", "object": "Auth0"}),
        )
        .await;
    assert_eq!(kg["success"], true, "{kg}");
    let before = palace_state(&mut s, 3).await;

    let tools: Vec<(String, Vec<String>)> = catalog()
        .into_iter()
        .map(|t| {
            let required = t
                .input_schema
                .get("required")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                });
            (t.name.to_string(), required)
        })
        .collect();
    let mut rng = StdRng::seed_from_u64(0x6d656d70);
    let mut answered = 0u64;
    for id in 10..10 + REQUESTS {
        // One line in twelve is raw bytes: invalid UTF-8 from the first byte on.
        let (line, expect) = if rng.random_ratio(1, 12) {
            let n = rng.random_range(1..4096);
            let mut bytes = vec![0xffu8];
            bytes.extend((0..n).map(|_| rng.random::<u8>()).filter(|b| *b != b'\n'));
            (bytes, Expect::ParseError)
        } else {
            let (line, expect) = generated_line(&mut rng, id, &tools);
            (line.into_bytes(), expect)
        };
        s.send_bytes(&line).await;
        let v = s.next().await;
        let shown: String = String::from_utf8_lossy(&line).chars().take(300).collect();
        match expect {
            Expect::ParseError => {
                assert!(v["id"].is_null(), "{shown} → {v}");
                assert_eq!(v["error"]["code"], -32700, "{shown} → {v}");
            }
            Expect::ErrorWithoutId(code) => {
                assert!(v["id"].is_null(), "{shown} → {v}");
                assert_eq!(v["error"]["code"], code, "{shown} → {v}");
            }
            Expect::Error(want, code) => {
                assert_eq!(v["id"], want, "{shown} → {v}");
                assert_eq!(v["error"]["code"], code, "{shown} → {v}");
            }
            Expect::AnyAnswer(want) => {
                assert_eq!(v["id"], want, "{shown} → {v}");
                assert!(v["result"].is_object() || v["error"].is_object(), "{v}");
            }
        }
        answered += 1;
    }
    assert_eq!(answered, REQUESTS);
    // Memory stays bounded: the model, the store and one request at a time, never the sum of
    // everything sent (about 200 MB of hostile lines in this run).
    let peak_mib = s.peak_rss_kib() / 1024;
    assert!(
        peak_mib < PEAK_RSS_BOUND_MIB,
        "server peak RSS {peak_mib} MiB is over the bound of {PEAK_RSS_BOUND_MIB} MiB"
    );
    assert_eq!(
        palace_state(&mut s, 5).await,
        before,
        "the palace is unchanged"
    );
    drop(s.stdin);
    let exit = tokio::time::timeout(Duration::from_secs(30), s.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exit.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_asked_for_just_before_the_client_hangs_up_are_finished() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let mut s = Server::start(&palace).await;
    // Forty writes, then stdin closes before any answer has been read.
    const WRITES: u64 = 40;
    for id in 1..=WRITES {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "mempalace_add_drawer",
            "arguments": {"wing": "wing_ops", "room": "notes", "content": fact(7_000 + id)}}});
        s.send_line(&request.to_string()).await;
    }
    let Server {
        mut child, stdin, ..
    } = s;
    drop(stdin);
    let exit = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .expect("the server exits once its client has gone")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    // Every write the client asked for is in the palace.
    let mut again = Server::start(&palace).await;
    let status = again.tool_result(100, "mempalace_status", json!({})).await;
    assert_eq!(status["total_drawers"], WRITES, "{status}");
}
