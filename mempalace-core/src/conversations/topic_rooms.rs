//! The room a conversation is filed in, by topic, exactly as MemPalace 3.11's
//! `detect_convo_room` picks it.

/// 3.11's conversation rooms and their keywords, in 3.11's order (ties go to the first).
pub const TOPIC_KEYWORDS: [(&str, &[&str]); 5] = [
    (
        "technical",
        &[
            "code", "python", "function", "bug", "error", "api", "database", "server", "deploy",
            "git", "test", "debug", "refactor",
        ],
    ),
    (
        "architecture",
        &[
            "architecture",
            "design",
            "pattern",
            "structure",
            "schema",
            "interface",
            "module",
            "component",
            "service",
            "layer",
        ],
    ),
    (
        "planning",
        &[
            "plan",
            "roadmap",
            "milestone",
            "deadline",
            "priority",
            "sprint",
            "backlog",
            "scope",
            "requirement",
            "spec",
        ],
    ),
    (
        "decisions",
        &[
            "decided",
            "chose",
            "picked",
            "switched",
            "migrated",
            "replaced",
            "trade-off",
            "alternative",
            "option",
            "approach",
        ],
    ),
    (
        "problems",
        &[
            "problem",
            "issue",
            "broken",
            "failed",
            "crash",
            "stuck",
            "workaround",
            "fix",
            "solved",
            "resolved",
        ],
    ),
];

/// The room when no topic keyword occurs.
pub const GENERAL_ROOM: &str = "general";

/// How many characters of a conversation decide its room (3.11 reads the first 3,000).
pub const ROUTING_CHARS: usize = 3000;

/// The room whose keywords appear (each counted once, as substrings) most in the first
/// [`ROUTING_CHARS`] characters of `text`, lower-cased; [`GENERAL_ROOM`] when none does.
pub fn topic_room(text: &str) -> &'static str {
    let head: String = text
        .chars()
        .take(ROUTING_CHARS)
        .collect::<String>()
        .to_lowercase();
    let mut best: Option<(&'static str, usize)> = None;
    for (room, keywords) in TOPIC_KEYWORDS {
        let score = keywords.iter().filter(|k| head.contains(*k)).count();
        if score > 0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((room, score));
        }
    }
    best.map_or(GENERAL_ROOM, |(room, _)| room)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_distinct_keywords_win_and_ties_go_first() {
        assert_eq!(
            topic_room("We hit a bug in the API server; the database test failed"),
            "technical"
        );
        assert_eq!(
            topic_room("The roadmap: plan the sprint, set a deadline, groom the backlog"),
            "planning"
        );
        // One keyword each for technical ("code") and planning ("plan"): the first wins.
        assert_eq!(topic_room("code plan"), "technical");
        assert_eq!(topic_room("Lunch at noon?"), GENERAL_ROOM);
        // Only the head counts.
        let late = format!("{}bug", "x".repeat(ROUTING_CHARS));
        assert_eq!(topic_room(&late), GENERAL_ROOM);
    }
}
