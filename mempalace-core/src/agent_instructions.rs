//! The texts agents are given: MemPalace 3.11's skill instructions (`mempalace instructions
//! NAME`) and its shared-brain rules block (`mempalace rules`), adapted where they describe
//! installing or running the Python release. The `search`, `status` and rules texts are 3.11's
//! own, unchanged (MIT licence, `instructions/LICENSE-MEMPALACE-3.11`).

use crate::error::{PalaceError, Result};

/// The instruction texts by name, in `mempalace instructions NAME` order.
const INSTRUCTIONS: [(&str, &str); 5] = [
    ("help", include_str!("../instructions/help.md")),
    ("init", include_str!("../instructions/init.md")),
    ("mine", include_str!("../instructions/mine.md")),
    ("search", include_str!("../instructions/search.md")),
    ("status", include_str!("../instructions/status.md")),
];

/// The shared-brain rules template (`<HOST>`, `<HARNESS>`, `<PROJECT>` filled in by
/// [`shared_brain_rules`]).
const SHARED_BRAIN_RULES: &str = include_str!("../instructions/shared_brain_rules.md");

/// The names `instructions` accepts, sorted.
pub fn instruction_names() -> impl Iterator<Item = &'static str> {
    INSTRUCTIONS.iter().map(|(name, _)| *name)
}

/// The skill instructions called `name` (`help`, `init`, `mine`, `search`, `status`), or `None`.
pub fn instructions(name: &str) -> Option<&'static str> {
    INSTRUCTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// One part of an agent identity `host:harness:project`: trimmed, matching
/// `^[a-z0-9][a-z0-9._-]*$` (3.11's rule and message).
pub fn identity_component(field: &'static str, value: &str) -> Result<String> {
    let value = value.trim();
    let b = value.as_bytes();
    let ok = !b.is_empty()
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._-".contains(&c));
    if !ok {
        return Err(PalaceError::invalid(
            field,
            format!(
                "--{field} must be a stable lowercase token like windows, grok, or mempalace (letters, digits, '.', '_', '-'; no colons, no uppercase)"
            ),
        ));
    }
    Ok(value.to_string())
}

/// The shared-brain rules block for the agent `host:harness:project`, between the markers a
/// later render replaces in place: 3.11's `mempalace rules` output, byte for byte.
pub fn shared_brain_rules(host: &str, harness: &str, project: &str) -> Result<String> {
    let host = identity_component("host", host)?;
    let harness = identity_component("harness", harness)?;
    let project = identity_component("project", project)?;
    let body = SHARED_BRAIN_RULES
        .replace("<HOST>", &host)
        .replace("<HARNESS>", &harness)
        .replace("<PROJECT>", &project);
    Ok(format!(
        "<!-- mempalace-shared-brain:start (canonical source: mempalace repo integrations/shared/coordination-protocol.md — edit there, re-render with `mempalace rules --host {host} --harness {harness} --project {project}`) -->\n\n{}\n\n<!-- mempalace-shared-brain:end -->",
        body.trim_end_matches('\n')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_text_is_there_and_unknown_names_are_none() {
        for name in instruction_names() {
            assert!(instructions(name).is_some_and(|t| t.starts_with("# MemPalace")));
        }
        assert!(instructions("audit").is_none());
        assert!(instructions("../init").is_none());
    }

    #[test]
    fn rules_fill_the_identity_and_refuse_a_bad_component() {
        let text = shared_brain_rules("mac", "claude", "proj").unwrap();
        assert!(text.contains("mac:claude:proj"));
        assert!(!text.contains("<HOST>"));
        assert!(text.ends_with("<!-- mempalace-shared-brain:end -->"));
        for bad in ["Mac", "a:b", "", "-x", "a b"] {
            let err = shared_brain_rules(bad, "claude", "proj").unwrap_err();
            assert!(
                crate::coordination::error_message(&err).starts_with("--host must be"),
                "{bad}"
            );
        }
    }
}
