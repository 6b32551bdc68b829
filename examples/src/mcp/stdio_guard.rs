//! A guard in front of the JSON-RPC transport: every stdin line that is not JSON gets a
//! JSON-RPC error (-32700 not JSON, -32600 not a request, -32602 malformed parameters) instead
//! of being silently dropped by the decoder, oversized lines are refused
//! the same way, and only one task ever writes to stdout, so answers never interleave.

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest request line accepted, in bytes.
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// The response to a line that could not be parsed.
pub fn parse_error_response(detail: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": format!("Parse error: {detail}")}
    })
    .to_string()
}

/// The response to a JSON value that is not a message the server understands.
fn error_response(id: serde_json::Value, code: i32, message: String) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message}
    })
    .to_string()
}

/// Request methods of the MCP specification a client may send.
const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// What kind of message a line that decodes carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// An `initialize` request.
    Initialize,
    /// Any other request (it has an id and gets an answer).
    Request,
    /// A notification, response or error from the client (no answer expected).
    NoAnswerExpected,
}

/// What to do with one request line.
#[derive(Debug, Clone, PartialEq)]
pub enum LineVerdict {
    /// A JSON-RPC message the MCP server decodes: pass it on.
    Forward(MessageKind),
    /// A notification the server would not understand: notifications get no answer.
    Ignore,
    /// Answer this error response here (the server would drop the line unanswered).
    Answer(String),
}

/// Judges one line the way the server's decoder would: what it decodes goes through, anything
/// else is answered with the JSON-RPC error it deserves (-32700 not JSON, -32600 not a request,
/// for example a batch, -32602 a known method with parameters of the wrong shape).
pub fn judge_line(bytes: &[u8]) -> LineVerdict {
    let value = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v) => v,
        Err(e) => return LineVerdict::Answer(parse_error_response(&e.to_string())),
    };
    let decode_error = match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        // A standard method whose params did not fit decodes as a custom request, which the
        // server would answer "method not found": it is a params error.
        Ok(JsonRpcMessage::Request(JsonRpcRequest {
            id,
            request: ClientRequest::CustomRequest(custom),
            ..
        })) if STANDARD_METHODS.contains(&custom.method.as_str()) => {
            return LineVerdict::Answer(error_response(
                serde_json::to_value(&id).unwrap_or_default(),
                -32602,
                format!("Invalid params for {}", custom.method),
            ));
        }
        Ok(JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::InitializeRequest(_),
            ..
        })) => return LineVerdict::Forward(MessageKind::Initialize),
        Ok(JsonRpcMessage::Request(_)) => return LineVerdict::Forward(MessageKind::Request),
        Ok(_) => return LineVerdict::Forward(MessageKind::NoAnswerExpected),
        Err(e) => e,
    };
    let Some(object) = value.as_object() else {
        let what = if value.is_array() {
            "batch requests are not supported".to_string()
        } else {
            format!("a request is a JSON object, not {value}")
                .chars()
                .take(200)
                .collect()
        };
        return LineVerdict::Answer(error_response(
            serde_json::Value::Null,
            -32600,
            format!("Invalid Request: {what}"),
        ));
    };
    let id = match object.get("id") {
        Some(id @ (serde_json::Value::String(_) | serde_json::Value::Number(_))) => id.clone(),
        Some(_) => serde_json::Value::Null,
        None if object.contains_key("method") => return LineVerdict::Ignore,
        None => serde_json::Value::Null,
    };
    let detail: String = decode_error.to_string().chars().take(300).collect();
    let well_formed = object.get("jsonrpc").and_then(|v| v.as_str()) == Some("2.0")
        && object.get("method").is_some_and(|m| m.is_string())
        && !id.is_null();
    if well_formed {
        LineVerdict::Answer(error_response(
            id,
            -32602,
            format!("Invalid params: {detail}"),
        ))
    } else {
        LineVerdict::Answer(error_response(
            id,
            -32600,
            format!("Invalid Request: {detail}"),
        ))
    }
}

/// Reads one line of at most `max` bytes (without the newline); `Ok(None)` at end of input.
/// A longer line is consumed to its end and reported as `Err(len)`.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    max: usize,
) -> std::io::Result<Option<Result<Vec<u8>, usize>>> {
    let mut line = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if total == 0 {
                None
            } else if total > max {
                Some(Err(total))
            } else {
                Some(Ok(line))
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        total += chunk.len();
        if total <= max {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        let consumed = done.unwrap_or(chunk.len());
        reader.consume(consumed);
        if done.is_some() {
            return Ok(Some(if total > max { Err(total) } else { Ok(line) }));
        }
    }
}

/// Proxies `input` → `to_server` (valid JSON lines only) and `from_server` → `output`,
/// answering unparseable lines itself. Returns when input ends and the server has finished.
pub async fn guard_lines<I, O, SR, SW>(
    input: I,
    output: O,
    from_server: SR,
    mut to_server: SW,
) -> std::io::Result<()>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    SR: AsyncRead + Unpin + Send + 'static,
    SW: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(write_answers(output, from_server, rx));
    let mut reader = BufReader::with_capacity(1 << 16, input);
    // Until the client's `initialize` has gone through, the server's handshake reads only
    // requests: a notification or response there would end the session, so it is dropped
    // (the specification lets a client send none before initializing; none is lost).
    let mut initialize_sent = false;
    while let Some(line) = read_line(&mut reader, MAX_LINE_BYTES).await? {
        let answer = match line {
            Err(len) => Some(parse_error_response(&format!(
                "request line of {len} bytes exceeds {MAX_LINE_BYTES}"
            ))),
            Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
            Ok(bytes) => match judge_line(&bytes) {
                LineVerdict::Forward(MessageKind::NoAnswerExpected) if !initialize_sent => {
                    tracing::debug!("dropped a notification sent before initialize");
                    None
                }
                LineVerdict::Forward(kind) => {
                    initialize_sent |= kind == MessageKind::Initialize;
                    to_server.write_all(&bytes).await?;
                    to_server.write_all(b"\n").await?;
                    to_server.flush().await?;
                    None
                }
                LineVerdict::Ignore => None,
                LineVerdict::Answer(response) => Some(response),
            },
        };
        if let Some(a) = answer {
            tracing::debug!("answered an unparseable request line");
            if tx.send(a.into_bytes()).await.is_err() {
                break;
            }
        }
    }
    to_server.shutdown().await?;
    drop(to_server);
    drop(tx);
    writer.await.map_err(std::io::Error::other)??;
    Ok(())
}

/// The one writer of `output`: the server's answers (read line by line from `from_server`)
/// and the guard's own `answers`, each line written whole, until both have ended.
async fn write_answers<O, SR>(
    mut output: O,
    from_server: SR,
    mut answers: mpsc::Receiver<Vec<u8>>,
) -> std::io::Result<()>
where
    O: AsyncWrite + Unpin,
    SR: AsyncRead + Unpin,
{
    // `Split` keeps a partly read line in itself, so a `select!` that drops its future in
    // favour of an answer loses nothing.
    let mut server_lines = BufReader::new(from_server).split(b'\n');
    let (mut server_open, mut answers_open) = (true, true);
    while server_open || answers_open {
        let line = tokio::select! {
            line = server_lines.next_segment(), if server_open => {
                let line = line?;
                server_open = line.is_some();
                line
            }
            answer = answers.recv(), if answers_open => {
                answers_open = answer.is_some();
                answer
            }
        };
        let Some(mut line) = line else {
            continue;
        };
        line.push(b'\n');
        output.write_all(&line).await?;
        output.flush().await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> serde_json::Value {
        match judge_line(line.as_bytes()) {
            LineVerdict::Answer(a) => serde_json::from_str(&a).unwrap(),
            other => panic!("{line} → {other:?}"),
        }
    }

    #[test]
    fn lines_are_judged_like_the_decoder_would() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mempalace_status"}}"#;
        assert_eq!(
            judge_line(ok.as_bytes()),
            LineVerdict::Forward(MessageKind::Request)
        );
        assert_eq!(
            judge_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            LineVerdict::Forward(MessageKind::NoAnswerExpected)
        );
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(
            judge_line(init.as_bytes()),
            LineVerdict::Forward(MessageKind::Initialize)
        );
        let batch = answer(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
        assert_eq!(
            (batch["error"]["code"].as_i64(), batch["id"].is_null()),
            (Some(-32600), true)
        );
        let params = answer(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":5}"#);
        assert_eq!(
            (params["error"]["code"].as_i64(), params["id"].as_str()),
            (Some(-32602), Some("a"))
        );
        let shape =
            answer(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":["x"]}}"#);
        assert_eq!(
            (shape["error"]["code"].as_i64(), shape["id"].as_i64()),
            (Some(-32602), Some(3))
        );
        let version = answer(r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#);
        assert_eq!(
            (version["error"]["code"].as_i64(), version["id"].as_i64()),
            (Some(-32600), Some(7))
        );
        assert_eq!(answer(r#"{"q":"\ud800"}"#)["error"]["code"], -32700);
        assert_eq!(answer("[[[[").get("id"), Some(&serde_json::Value::Null));
        assert_eq!(
            judge_line(br#"{"jsonrpc":"2.0","method":"tools/call","params":5}"#),
            LineVerdict::Ignore
        );
    }

    #[tokio::test]
    async fn bad_lines_are_answered_good_lines_forwarded() {
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n\xff\xfe\x00raw\n\n{\"a\":\"\\ud800\"}\n".to_vec();
        let (server_side, proxy_side) = tokio::io::duplex(1 << 16);
        let (from_server, to_server) = tokio::io::split(proxy_side);
        let (mut server_read, server_write) = tokio::io::split(server_side);
        drop(server_write); // the fake server says nothing, and hangs up once input ends
        let fake_server = tokio::spawn(async move {
            let mut forwarded = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut server_read, &mut forwarded)
                .await
                .unwrap();
            forwarded
        });
        let (out_w, mut out_r) = tokio::io::duplex(1 << 16);
        let collector = tokio::spawn(async move {
            let mut v = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut out_r, &mut v)
                .await
                .unwrap();
            v
        });
        let guarded = guard_lines(std::io::Cursor::new(input), out_w, from_server, to_server);
        tokio::time::timeout(std::time::Duration::from_secs(10), guarded)
            .await
            .expect("the guard ends when input ends")
            .unwrap();
        let forwarded = fake_server.await.unwrap();
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        let answered = String::from_utf8(collector.await.unwrap()).unwrap();
        let lines: Vec<&str> = answered.lines().collect();
        assert_eq!(lines.len(), 3, "{answered}");
        for l in lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["error"]["code"], -32700);
            assert!(v["id"].is_null());
        }
    }
}
