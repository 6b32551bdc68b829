//! A guard in front of the JSON-RPC transport: every stdin line that is not JSON gets a
//! JSON-RPC parse error (-32700) instead of being silently dropped, oversized lines are refused
//! the same way, and only one task ever writes to stdout, so answers never interleave.

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
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            output.write_all(&line).await?;
            output.flush().await?;
        }
        std::io::Result::Ok(())
    });
    let server_tx = tx.clone();
    let relay = tokio::spawn(async move {
        let mut lines = BufReader::new(from_server).split(b'\n');
        while let Some(line) = lines.next_segment().await? {
            if server_tx.send(line).await.is_err() {
                break;
            }
        }
        std::io::Result::Ok(())
    });
    let mut reader = BufReader::with_capacity(1 << 16, input);
    while let Some(line) = read_line(&mut reader, MAX_LINE_BYTES).await? {
        let answer = match line {
            Err(len) => Some(parse_error_response(&format!(
                "request line of {len} bytes exceeds {MAX_LINE_BYTES}"
            ))),
            Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
            Ok(bytes) => match serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
                Ok(_) => {
                    to_server.write_all(&bytes).await?;
                    to_server.write_all(b"\n").await?;
                    to_server.flush().await?;
                    None
                }
                Err(e) => Some(parse_error_response(&e.to_string())),
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
    relay.await.map_err(std::io::Error::other)??;
    writer.await.map_err(std::io::Error::other)??;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bad_lines_are_answered_good_lines_forwarded() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n\n{\"a\":\"\\ud800\"}\n".to_vec();
        let (server_side, proxy_side) = tokio::io::duplex(1 << 16);
        let (from_server, to_server) = tokio::io::split(proxy_side);
        let (mut server_read, server_write) = tokio::io::split(server_side);
        drop(server_write); // the fake server says nothing
        let (out_w, mut out_r) = tokio::io::duplex(1 << 16);
        let collector = tokio::spawn(async move {
            let mut v = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut out_r, &mut v)
                .await
                .unwrap();
            v
        });
        guard_lines(std::io::Cursor::new(input), out_w, from_server, to_server)
            .await
            .unwrap();
        let mut forwarded = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut server_read, &mut forwarded)
            .await
            .unwrap();
        assert_eq!(
            forwarded,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        let answered = String::from_utf8(collector.await.unwrap()).unwrap();
        let lines: Vec<&str> = answered.lines().collect();
        assert_eq!(lines.len(), 2, "{answered}");
        for l in lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["error"]["code"], -32700);
            assert!(v["id"].is_null());
        }
    }
}
