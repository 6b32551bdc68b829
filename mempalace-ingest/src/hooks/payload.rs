//! The JSON an agent harness writes to a hook's stdin, read as MemPalace 3.11 reads it: the
//! session id (only `[A-Za-z0-9_-]` kept), the transcript path and `stop_hook_active`; plus
//! the working folder, which 3.11 ignores and we use when the transcript names none.

use serde_json::Value;

/// Largest payload read; a harness sends a few hundred bytes, so more is not a payload.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;

/// What a hook was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookPayload {
    /// The session id, safe to use in a file name (`unknown` when none was given).
    pub session_id: String,
    /// The transcript's path as given (checked later by [`super::transcript::TranscriptFile`]).
    pub transcript_path: Option<String>,
    /// The harness says a stop hook already asked the agent to go on.
    pub stop_hook_active: bool,
    /// The session's working folder, when the harness gives it.
    pub cwd: Option<String>,
    /// Why the payload could not be read (it is then read as `{}`, as 3.11 does).
    pub problem: Option<String>,
}

impl Default for HookPayload {
    fn default() -> Self {
        HookPayload {
            session_id: "unknown".to_string(),
            transcript_path: None,
            stop_hook_active: false,
            cwd: None,
            problem: None,
        }
    }
}

impl HookPayload {
    /// Reads a payload. Malformed, oversized or non-object input is read as `{}` with the
    /// reason kept in [`HookPayload::problem`]: a hook never fails on what it is sent.
    pub fn parse(bytes: &[u8]) -> HookPayload {
        let refused = |why: String| HookPayload {
            problem: Some(why),
            ..HookPayload::default()
        };
        if bytes.len() > MAX_PAYLOAD_BYTES {
            return refused(format!(
                "the payload is larger than {MAX_PAYLOAD_BYTES} bytes ({}); read as {{}}",
                bytes.len()
            ));
        }
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => return refused(format!("the payload is not JSON ({e}); read as {{}}")),
        };
        let Value::Object(map) = value else {
            return refused("the payload is not a JSON object; read as {}".to_string());
        };
        let session_id = map
            .get("session_id")
            .map(python_text)
            .map(|raw| sanitize_session_id(&raw))
            .unwrap_or_else(|| "unknown".to_string());
        let transcript_path = map
            .get("transcript_path")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        let stop_hook_active = map.get("stop_hook_active").is_some_and(|v| {
            matches!(python_text(v).to_lowercase().as_str(), "true" | "1" | "yes")
        });
        let cwd = map
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .map(str::to_string);
        HookPayload {
            session_id,
            transcript_path,
            stop_hook_active,
            cwd,
            problem: None,
        }
    }
}

/// A JSON value as Python's `str()` shows the decoded value (what 3.11 sanitizes).
fn python_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Null => "None".to_string(),
        other => other.to_string(),
    }
}

/// Only ASCII letters, digits, `-` and `_` (a session id names a state file); `unknown` when
/// nothing is left.
pub fn sanitize_session_id(raw: &str) -> String {
    let kept: String = raw
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(128)
        .collect();
    if kept.is_empty() {
        "unknown".to_string()
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_as_3_11_reads_them() {
        let p = HookPayload::parse(
            br#"{"session_id":"a/b..c d","transcript_path":"/x/t.jsonl","stop_hook_active":"TRUE","cwd":"/w"}"#,
        );
        assert_eq!(p.session_id, "abcd");
        assert_eq!(p.transcript_path.as_deref(), Some("/x/t.jsonl"));
        assert!(p.stop_hook_active);
        assert_eq!(p.cwd.as_deref(), Some("/w"));
        assert!(p.problem.is_none());
        assert_eq!(
            HookPayload::parse(br#"{"session_id":true}"#).session_id,
            "True"
        );
        assert_eq!(
            HookPayload::parse(br#"{"session_id":"\u00fcn\u00ef-x"}"#).session_id,
            "n-x"
        );
        assert!(!HookPayload::parse(br#"{"stop_hook_active":"on"}"#).stop_hook_active);
        assert!(HookPayload::parse(br#"{"stop_hook_active":1}"#).stop_hook_active);
    }

    #[test]
    fn hostile_payloads_read_as_empty_with_a_reason() {
        for bad in [
            &b""[..],
            b"not json",
            b"[1]",
            b"5",
            b"null",
            b"{} x",
            b"\xff\xfe",
        ] {
            let p = HookPayload::parse(bad);
            assert_eq!(p.session_id, "unknown", "{bad:?}");
            assert!(p.transcript_path.is_none());
            assert!(p.problem.is_some(), "{bad:?}");
        }
        let wrong_types = HookPayload::parse(br#"{"transcript_path":["a.jsonl"],"cwd":5}"#);
        assert!(wrong_types.transcript_path.is_none() && wrong_types.cwd.is_none());
        let huge = vec![b' '; MAX_PAYLOAD_BYTES + 1];
        assert!(
            HookPayload::parse(&huge)
                .problem
                .unwrap()
                .contains("larger")
        );
    }
}
