//! Human-readable output of search, status and knowledge-graph results.

use std::fmt::Write;

use mempalace_core::Fact;
use mempalace_core::reports::{SearchResponse, Status};

/// Search results as numbered blocks: similarity, wing/room, source, then the text.
pub fn search(r: &SearchResponse) -> String {
    let mut out = String::new();
    let scope = match (&r.filters.wing, &r.filters.room) {
        (Some(w), Some(rm)) => format!(" in {w}/{rm}"),
        (Some(w), None) => format!(" in {w}"),
        (None, Some(rm)) => format!(" in room {rm}"),
        (None, None) => String::new(),
    };
    let _ = writeln!(
        out,
        "{} result(s) for {:?}{scope}\n",
        r.results.len(),
        r.query
    );
    for (i, hit) in r.results.iter().enumerate() {
        let _ = writeln!(
            out,
            "[{}] {:.3}  {}/{}  ({})",
            i + 1,
            hit.similarity,
            hit.wing,
            hit.room,
            hit.source_file
        );
        for line in hit.text.lines().take(12) {
            let _ = writeln!(out, "    {line}");
        }
        if hit.text.lines().count() > 12 {
            let _ = writeln!(out, "    …");
        }
        out.push('\n');
    }
    out
}

/// Status as a tree of wings and rooms.
pub fn status(
    s: &Status,
    taxonomy: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>,
) -> String {
    let mut out = String::new();
    match s {
        Status::NoPalace(n) => {
            let _ = writeln!(out, "{} at {}\n{}", n.error, n.palace_path, n.hint);
        }
        Status::Ready(r) => {
            let _ = writeln!(
                out,
                "Palace: {}\n{} drawers in {} wing(s)",
                r.palace_path,
                r.total_drawers,
                r.wings.len()
            );
            for (wing, rooms) in taxonomy {
                let _ = writeln!(
                    out,
                    "├─ {wing} ({})",
                    r.wings.get(wing).copied().unwrap_or(0)
                );
                let n = rooms.len();
                for (i, (room, count)) in rooms.iter().enumerate() {
                    let branch = if i + 1 == n { "└─" } else { "├─" };
                    let _ = writeln!(out, "│  {branch} {room} ({count})");
                }
            }
        }
    }
    out
}

/// Facts one per line: subject → predicate → object [from … to …].
pub fn facts(facts: &[Fact]) -> String {
    let mut out = String::new();
    for f in facts {
        let span = match (&f.valid_from, &f.valid_to) {
            (None, None) => String::new(),
            (Some(a), None) => format!("  [since {a}]"),
            (None, Some(b)) => format!("  [until {b}]"),
            (Some(a), Some(b)) => format!("  [{a} … {b}]"),
        };
        let mark = if f.current { "" } else { "  (ended)" };
        let _ = writeln!(
            out,
            "{} → {} → {}{span}{mark}",
            f.subject, f.predicate, f.object
        );
    }
    if facts.is_empty() {
        out.push_str("no facts\n");
    }
    out
}
