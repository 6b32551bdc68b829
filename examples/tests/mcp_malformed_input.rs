//! Malformed input on the MCP server's stdin: broken JSON, a batch, missing and mistyped
//! arguments, a 10 MB content string. Every request is answered, the server stays alive, and
//! nothing bad is stored.

use std::time::Duration;

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
        let mut s = Server {
            child,
            stdin,
            stdout,
        };
        s.send_line(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}).to_string()).await;
        let init = s.next().await;
        assert_eq!(init["id"], 0, "{init}");
        s.send_line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
            .await;
        s
    }

    async fn send_line(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
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
    assert_eq!(unknown["error"]["code"], -32602);
    let huge = "x".repeat(10 * 1024 * 1024);
    let big = s
        .request(
            7,
            "mempalace_add_drawer",
            json!({"wing": "w", "room": "r", "content": huge}),
        )
        .await;
    assert_eq!(
        big["error"]["code"], -32000,
        "a 10 MB drawer is refused with a message"
    );
    assert!(
        big["error"]["message"]
            .as_str()
            .unwrap()
            .contains("content")
    );
    let empty = s
        .request(
            8,
            "mempalace_add_drawer",
            json!({"wing": "w", "room": "r", "content": "  "}),
        )
        .await;
    assert_eq!(empty["error"]["code"], -32000);

    // Still alive, and nothing was stored.
    let status = s.request(9, "mempalace_status", json!({})).await;
    let text = status["result"]["content"][0]["text"].as_str().unwrap();
    let payload: Value = serde_json::from_str(text).unwrap();
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
