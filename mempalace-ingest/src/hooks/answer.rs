//! What a hook prints for its harness: one JSON object, pretty-printed with two spaces as
//! MemPalace 3.11 prints it (`{}` when there is nothing to say).

use serde_json::{Value, json};

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// `{}`: go on.
    Nothing,
    /// `{"systemMessage": …}`: a line the harness shows the user.
    SystemMessage(String),
    /// `{"decision": "block", "reason": …}`: the agent is asked to go on and save (3.11's
    /// legacy stop mode).
    Block(String),
    /// `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`: text added to
    /// the agent's context (session start).
    Context {
        /// The harness's event name (`SessionStart`).
        event: String,
        /// The text.
        text: String,
    },
}

impl HookAnswer {
    /// The answer as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            HookAnswer::Nothing => json!({}),
            HookAnswer::SystemMessage(m) => json!({ "systemMessage": m }),
            HookAnswer::Block(reason) => json!({ "decision": "block", "reason": reason }),
            HookAnswer::Context { event, text } => json!({
                "hookSpecificOutput": { "hookEventName": event, "additionalContext": text }
            }),
        }
    }

    /// The bytes to print: the JSON with two-space indents and raw UTF-8, then a newline.
    pub fn to_json(&self) -> String {
        let mut text =
            serde_json::to_string_pretty(&self.to_value()).unwrap_or_else(|_| "{}".to_string());
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_print_as_3_11_prints_them() {
        assert_eq!(HookAnswer::Nothing.to_json(), "{}\n");
        assert_eq!(
            HookAnswer::SystemMessage("✦ 1 checkpoint saved".into()).to_json(),
            "{\n  \"systemMessage\": \"✦ 1 checkpoint saved\"\n}\n"
        );
        assert_eq!(
            HookAnswer::Block("r".into()).to_json(),
            "{\n  \"decision\": \"block\",\n  \"reason\": \"r\"\n}\n"
        );
    }
}
