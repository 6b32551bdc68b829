//! The stdio transport, with a guard on every line: a stdin line that is not a message the
//! server understands gets a JSON-RPC error (-32700 not JSON, -32600 not a request, -32602
//! malformed parameters) instead of being silently dropped by the decoder, oversized lines are
//! refused the same way, and every line written to stdout is written whole, so answers never
//! interleave.
//!
//! Each line is decoded once, here, and handed to rmcp as a message: no second decoder, no
//! copy through an in-process pipe, and no task in between.

use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest};
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

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
#[derive(Debug)]
pub enum LineVerdict {
    /// A JSON-RPC message the MCP server understands, decoded: pass it on.
    Forward(Box<ClientJsonRpcMessage>),
    /// A notification the server would not understand: notifications get no answer.
    Ignore,
    /// Answer this error response here (the server would drop the line unanswered).
    Answer(String),
}

/// What kind of message `message` is.
pub fn message_kind(message: &ClientJsonRpcMessage) -> MessageKind {
    match message {
        JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::InitializeRequest(_),
            ..
        }) => MessageKind::Initialize,
        JsonRpcMessage::Request(_) => MessageKind::Request,
        _ => MessageKind::NoAnswerExpected,
    }
}

/// Judges one line the way the server's decoder would: what it decodes goes through, anything
/// else is answered with the JSON-RPC error it deserves (-32700 not JSON, -32600 not a request,
/// for example a batch, -32602 a known method with parameters of the wrong shape). A line
/// that decodes is decoded once; only a line that does not is read again as plain JSON, to
/// say why.
pub fn judge_line(bytes: &[u8]) -> LineVerdict {
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
        Ok(message) => return LineVerdict::Forward(Box::new(message)),
        Err(e) => e,
    };
    let value = match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v) => v,
        Err(e) => return LineVerdict::Answer(parse_error_response(&e.to_string())),
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

/// Most answers to bad lines waiting to be written; reading stops until one is out, so a client
/// that floods bad lines and never reads holds at most this many.
const MAX_PENDING_ANSWERS: usize = 64;

/// One line read from the input.
enum Line {
    /// A line of at most [`MAX_LINE_BYTES`] (without its newline).
    Whole(Vec<u8>),
    /// A longer line, consumed to its end: its length.
    TooLong(usize),
}

/// The MCP server's transport over a byte stream pair (stdin and stdout): lines in, judged by
/// [`judge_line`] and decoded once; answers out, one whole line each.
pub struct GuardedTransport<R, W> {
    /// The request stream.
    input: BufReader<R>,
    /// The part of the current line read so far. It lives here, not in `receive`'s future:
    /// rmcp polls `receive` in a `select!` and drops it whenever another branch is ready, and
    /// the next call must go on where the dropped one stopped.
    line: Vec<u8>,
    /// Length of the current line so far, counting bytes dropped past the limit.
    line_len: usize,
    /// The answer stream, shared by every write in flight; `None` once closed.
    output: Arc<Mutex<Option<W>>>,
    /// The guard's own answers (to bad lines) being written, one permit each.
    answers: PendingAnswers,
    /// Whether the client's `initialize` has gone through. Until then the server's handshake
    /// reads only requests: a notification or response there would end the session, so it is
    /// dropped (the specification lets a client send none before initializing).
    initialize_sent: bool,
}

impl<R, W> GuardedTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading requests from `input` and writing answers to `output`.
    pub fn new(input: R, output: W) -> Self {
        GuardedTransport {
            input: BufReader::with_capacity(1 << 16, input),
            line: Vec::new(),
            line_len: 0,
            output: Arc::new(Mutex::new(Some(output))),
            answers: PendingAnswers::new(),
            initialize_sent: false,
        }
    }

    /// The next line, `None` at the end of the input. Cancel safe: what a dropped call had
    /// read stays in `self.line`.
    async fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let buf = self.input.fill_buf().await?;
            if buf.is_empty() {
                // The end of the input; a last line without a newline still counts.
                return Ok((self.line_len > 0).then(|| self.take_line()));
            }
            let newline = buf.iter().position(|b| *b == b'\n');
            let chunk = &buf[..newline.unwrap_or(buf.len())];
            self.line_len += chunk.len();
            if self.line_len <= MAX_LINE_BYTES {
                self.line.extend_from_slice(chunk);
            } else {
                self.line = Vec::new();
            }
            let consumed = newline.map_or(buf.len(), |i| i + 1);
            self.input.consume(consumed);
            if newline.is_some() {
                return Ok(Some(self.take_line()));
            }
        }
    }

    /// Ends the current line and starts the next.
    fn take_line(&mut self) -> Line {
        let len = std::mem::take(&mut self.line_len);
        let line = std::mem::take(&mut self.line);
        if len > MAX_LINE_BYTES {
            Line::TooLong(len)
        } else {
            Line::Whole(line)
        }
    }

    /// The guard's answers still being written: wait on them before the process ends (a
    /// session that ends in its handshake drops the transport without closing it).
    pub fn pending_answers(&self) -> PendingAnswers {
        self.answers.clone()
    }

    /// Writes `answer` in the background (never waits here, so stays cancel safe).
    fn answer(&self, answer: String) {
        tracing::debug!("answered an unparseable request line");
        let output = Arc::clone(&self.output);
        let slot = self.answers.slot();
        tokio::spawn(async move {
            if let Err(e) = write_line(&output, answer.into_bytes()).await {
                tracing::debug!(error = %e, "could not answer a bad request line");
            }
            drop(slot);
        });
    }
}

/// The guard's answers to bad lines that are still being written.
#[derive(Clone)]
pub struct PendingAnswers(Arc<Semaphore>);

impl PendingAnswers {
    /// Room for [`MAX_PENDING_ANSWERS`] answers at once.
    fn new() -> Self {
        PendingAnswers(Arc::new(Semaphore::new(MAX_PENDING_ANSWERS)))
    }

    /// The right to write one more answer, held until it is written (`None` when every slot
    /// is taken: `receive` waits for [`PendingAnswers::slot_free`] before it reads, so only a
    /// caller that did not wait gets none, and writes anyway).
    fn slot(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.0).try_acquire_owned().ok()
    }

    /// Returns once every answer started so far is written (or has failed).
    pub async fn written(&self) {
        let all = u32::try_from(MAX_PENDING_ANSWERS).unwrap_or(u32::MAX);
        drop(self.0.acquire_many(all).await);
    }

    /// Returns once at least one more answer may start.
    async fn slot_free(&self) {
        if self.0.available_permits() == 0 {
            drop(self.0.acquire().await);
        }
    }
}

/// Writes `line` and a newline to the output, whole, and flushes it.
async fn write_line<W: AsyncWrite + Unpin>(
    output: &Mutex<Option<W>>,
    mut line: Vec<u8>,
) -> io::Result<()> {
    line.push(b'\n');
    let mut output = output.lock().await;
    let Some(output) = output.as_mut() else {
        return Err(io::Error::new(
            io::ErrorKind::NotConnected,
            "the transport is closed",
        ));
    };
    output.write_all(&line).await?;
    output.flush().await
}

impl<R, W> Transport<RoleServer> for GuardedTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let line = serde_json::to_vec(&item).map_err(io::Error::other);
        let output = Arc::clone(&self.output);
        async move { write_line(&output, line?).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            // Cancel safe: a dropped wait for a semaphore permit takes none.
            self.answers.slot_free().await;
            let line = match self.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the request stream");
                    return None;
                }
            };
            let verdict = match line {
                Line::TooLong(len) => LineVerdict::Answer(parse_error_response(&format!(
                    "request line of {len} bytes exceeds {MAX_LINE_BYTES}"
                ))),
                Line::Whole(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
                Line::Whole(bytes) => judge_line(&bytes),
            };
            match verdict {
                LineVerdict::Forward(message) => match message_kind(&message) {
                    MessageKind::NoAnswerExpected if !self.initialize_sent => {
                        tracing::debug!("dropped a notification sent before initialize");
                    }
                    kind => {
                        self.initialize_sent |= kind == MessageKind::Initialize;
                        return Some(*message);
                    }
                },
                LineVerdict::Ignore => {}
                LineVerdict::Answer(response) => self.answer(response),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.answers.written().await;
        let mut output = self.output.lock().await;
        if let Some(mut output) = output.take() {
            output.flush().await?;
        }
        Ok(())
    }
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

    fn forwarded_kind(line: &str) -> MessageKind {
        match judge_line(line.as_bytes()) {
            LineVerdict::Forward(message) => message_kind(&message),
            other => panic!("{line} → {other:?}"),
        }
    }

    #[test]
    fn lines_are_judged_like_the_decoder_would() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mempalace_status"}}"#;
        assert_eq!(forwarded_kind(ok), MessageKind::Request);
        assert_eq!(
            forwarded_kind(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            MessageKind::NoAnswerExpected
        );
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(forwarded_kind(init), MessageKind::Initialize);
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
        let surrogate = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mempalace_search","arguments":{"query":"a\ud800b"}}}"#;
        assert_eq!(answer(surrogate)["error"]["code"], -32700);
        assert_eq!(answer("[[[[").get("id"), Some(&serde_json::Value::Null));
        assert!(matches!(
            judge_line(br#"{"jsonrpc":"2.0","method":"tools/call","params":5}"#),
            LineVerdict::Ignore
        ));
    }

    /// Every line the transport wrote to `output`, decoded.
    async fn written_lines(mut output: tokio::io::DuplexStream) -> Vec<serde_json::Value> {
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut output, &mut text)
            .await
            .unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn bad_lines_are_answered_good_lines_handed_over() {
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n\xff\xfe\x00raw\n\n{\"a\":\"\\ud800\"}\n".to_vec();
        let (out_w, out_r) = tokio::io::duplex(1 << 16);
        let mut transport = GuardedTransport::new(std::io::Cursor::new(input), out_w);
        // The notification before initialize is dropped; the ping goes through, decoded.
        let first = transport.receive().await.expect("the ping");
        assert_eq!(message_kind(&first), MessageKind::Request);
        assert!(transport.receive().await.is_none(), "input ended");
        transport.close().await.unwrap();
        drop(transport);
        let answers = written_lines(out_r).await;
        assert_eq!(answers.len(), 3, "{answers:?}");
        for a in answers {
            assert_eq!(a["error"]["code"], -32700);
            assert!(a["id"].is_null());
        }
    }

    #[tokio::test]
    async fn notifications_pass_once_initialize_has() {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let input = format!("{note}\n{init}\n{note}\n");
        let (out_w, _out_r) = tokio::io::duplex(1 << 16);
        let mut transport = GuardedTransport::new(std::io::Cursor::new(input.into_bytes()), out_w);
        let kinds = [
            message_kind(&transport.receive().await.unwrap()),
            message_kind(&transport.receive().await.unwrap()),
        ];
        assert_eq!(
            kinds,
            [MessageKind::Initialize, MessageKind::NoAnswerExpected]
        );
        assert!(transport.receive().await.is_none());
    }

    #[tokio::test]
    async fn a_dropped_receive_loses_no_part_of_a_line() {
        let (mut client, server_in) = tokio::io::duplex(1 << 16);
        let (out_w, _out_r) = tokio::io::duplex(1 << 16);
        let mut transport = GuardedTransport::new(server_in, out_w);
        let line = br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
        AsyncWriteExt::write_all(&mut client, &line[..10])
            .await
            .unwrap();
        // rmcp drops `receive` whenever another event wins its select!.
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(50), transport.receive()).await;
        assert!(waited.is_err(), "half a line is not a message");
        AsyncWriteExt::write_all(&mut client, &line[10..])
            .await
            .unwrap();
        AsyncWriteExt::write_all(&mut client, b"\n").await.unwrap();
        let message = transport.receive().await.expect("the whole ping");
        assert!(
            matches!(&message, JsonRpcMessage::Request(r) if r.id == rmcp::model::NumberOrString::Number(9)),
            "{message:?}"
        );
    }

    #[tokio::test]
    async fn answers_are_written_one_whole_line_each() {
        let (out_w, out_r) = tokio::io::duplex(1 << 20);
        let mut transport = GuardedTransport::new(std::io::Cursor::new(Vec::new()), out_w);
        // rmcp runs each send as a task of its own, so they overlap.
        let mut sends = Vec::new();
        for i in 0..20 {
            let big = "x".repeat(10_000 + i);
            sends.push(tokio::spawn(transport.send(
                TxJsonRpcMessage::<RoleServer>::error(
                    rmcp::ErrorData::internal_error(big, None),
                    Some(rmcp::model::NumberOrString::Number(i as i64)),
                ),
            )));
        }
        for s in sends {
            s.await.unwrap().unwrap();
        }
        transport.close().await.unwrap();
        drop(transport);
        let lines = written_lines(out_r).await;
        assert_eq!(lines.len(), 20);
        let mut ids: Vec<i64> = lines.iter().map(|l| l["id"].as_i64().unwrap()).collect();
        ids.sort();
        assert_eq!(ids, (0..20).collect::<Vec<_>>());
        assert!(transport_is_closed_to_new_writes().await);
    }

    async fn transport_is_closed_to_new_writes() -> bool {
        let (out_w, _out_r) = tokio::io::duplex(64);
        let mut transport = GuardedTransport::new(std::io::Cursor::new(Vec::new()), out_w);
        transport.close().await.unwrap();
        let late = transport.send(TxJsonRpcMessage::<RoleServer>::error(
            rmcp::ErrorData::internal_error("late", None),
            None,
        ));
        late.await
            .is_err_and(|e| e.kind() == io::ErrorKind::NotConnected)
    }
}
