//! Human-readable output of search, status and knowledge-graph results.
//!
//! Everything shown comes from the palace (drawer text, file names, entity names), which
//! anyone who can file a drawer controls: control characters are shown escaped (`\x1b`),
//! never sent to the terminal, so a drawer cannot retitle, clear or rewrite the user's
//! terminal. JSON output (`--json`) stays exact.

use std::borrow::Cow;
use std::fmt::Write;

use mempalace::core::Fact;
use mempalace::core::reports::{SearchResponse, Status};

/// `text` with every control character (C0, DEL, C1; newlines and tabs too) escaped.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    escape_controls(text, |_| false)
}

/// Multi-line text for the terminal: line breaks and tabs kept, every other control
/// character escaped.
pub fn terminal_safe_block(text: &str) -> String {
    text.lines()
        .map(|l| terminal_safe_line(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line of drawer text for the terminal: tabs kept, every other control character escaped.
fn terminal_safe_line(line: &str) -> Cow<'_, str> {
    escape_controls(line, |c| c == '\t')
}

fn escape_controls(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && !keep(c) {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Search results as numbered blocks: similarity, wing/room, source, then the text.
pub fn search(r: &SearchResponse) -> String {
    let mut out = String::new();
    let scope = match (&r.filters.wing, &r.filters.room) {
        (Some(w), Some(rm)) => format!(" in {}/{}", terminal_safe(w), terminal_safe(rm)),
        (Some(w), None) => format!(" in {}", terminal_safe(w)),
        (None, Some(rm)) => format!(" in room {}", terminal_safe(rm)),
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
            terminal_safe(&hit.wing),
            terminal_safe(&hit.room),
            terminal_safe(&hit.source_file)
        );
        if let Some(c) = &hit.conversation {
            let when = hit.authored_at.as_deref().unwrap_or("undated");
            let title = c.title.as_deref().unwrap_or(&c.id);
            let _ = writeln!(
                out,
                "    {} · {} · {}",
                terminal_safe(when),
                terminal_safe(&c.speakers.join(", ")),
                terminal_safe(title)
            );
        }
        for line in hit.text.lines().take(12) {
            let _ = writeln!(out, "    {}", terminal_safe_line(line));
        }
        if hit.text.lines().count() > 12 {
            let _ = writeln!(out, "    …");
        }
        out.push('\n');
    }
    out
}

/// The links a mine rebuilt, as 3.11's miner reports them (nothing when none).
pub fn wing_links(links: &mempalace::ingest::wing_links::WingLinks) -> String {
    let mut out = String::new();
    if links.hallways > 0 {
        out.push_str(&format!(
            "  Hallways: +{} within-wing entity link(s)\n",
            links.hallways
        ));
    }
    if links.entity_tunnels > 0 {
        out.push_str(&format!(
            "  Entity tunnels: +{} cross-wing entity link(s)\n",
            links.entity_tunnels
        ));
    }
    out
}

/// A conversation mine's summary: what was filed, what was skipped and why, what broke.
pub fn conversation_mine(
    r: &mempalace::ingest::conversation_mine::ConversationMineReport,
) -> String {
    let mut out = String::new();
    let formats: Vec<String> = r
        .files_by_format
        .iter()
        .map(|(f, n)| format!("{n} {f}"))
        .collect();
    let _ = writeln!(
        out,
        "Mined {} conversation(s) from {} file(s) ({}) into wing {}: {} new exchange(s), {} drawer(s), {} conversation(s) unchanged, in {:.1}s{}",
        r.conversations,
        r.files_by_format.values().sum::<u64>(),
        if formats.is_empty() {
            "none".to_string()
        } else {
            formats.join(", ")
        },
        terminal_safe(&r.wing),
        r.filed.new_exchanges,
        r.filed.drawers_filed,
        r.filed.conversations_unchanged,
        r.wall_seconds,
        if r.interrupted {
            " — interrupted, run mine again to finish"
        } else {
            ""
        }
    );
    if !r.left_out.is_empty() {
        let _ = writeln!(out, "Left out of turns by rule:");
        for (reason, n) in &r.left_out {
            let _ = writeln!(out, "  {n:>6}  {}", terminal_safe(reason));
        }
    }
    if !r.files_skipped.is_empty() {
        let _ = writeln!(out, "Skipped {} file(s):", r.files_skipped.len());
        for p in &r.files_skipped {
            let _ = writeln!(
                out,
                "  {}: {}",
                terminal_safe(&p.file),
                terminal_safe(&p.reason)
            );
        }
    }
    for p in &r.errors {
        let _ = writeln!(
            out,
            "error: {}: {}",
            terminal_safe(&p.file),
            terminal_safe(&p.reason)
        );
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
            let _ = writeln!(
                out,
                "{} at {}\n{}",
                n.error,
                terminal_safe(&n.palace_path),
                n.hint
            );
        }
        Status::Ready(r) => {
            let _ = writeln!(
                out,
                "Palace: {}\n{} drawers in {} wing(s)",
                terminal_safe(&r.palace_path),
                r.total_drawers,
                r.wings.len()
            );
            for (wing, rooms) in taxonomy {
                let _ = writeln!(
                    out,
                    "├─ {} ({})",
                    terminal_safe(wing),
                    r.wings.get(wing).copied().unwrap_or(0)
                );
                let n = rooms.len();
                for (i, (room, count)) in rooms.iter().enumerate() {
                    let branch = if i + 1 == n { "└─" } else { "├─" };
                    let _ = writeln!(out, "│  {branch} {} ({count})", terminal_safe(room));
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
            (Some(a), None) => format!("  [since {}]", terminal_safe(a)),
            (None, Some(b)) => format!("  [until {}]", terminal_safe(b)),
            (Some(a), Some(b)) => format!("  [{} … {}]", terminal_safe(a), terminal_safe(b)),
        };
        let mark = if f.current { "" } else { "  (ended)" };
        let _ = writeln!(
            out,
            "{} → {} → {}{span}{mark}",
            terminal_safe(&f.subject),
            terminal_safe(&f.predicate),
            terminal_safe(&f.object)
        );
    }
    if facts.is_empty() {
        out.push_str("no facts\n");
    }
    out
}

/// The summary of a migration: what was imported, what was there already, what was skipped
/// and why.
pub fn migration(report: &mempalace::ingest::migrate::MigrateReport) -> String {
    let mut out = format!(
        "Migrated {} (MemPalace 3.11) in {:.1}s: {} drawer(s) found, {} imported, {} already here, {} skipped.\n",
        report.from.display(),
        report.seconds,
        report.drawers_found,
        report.imported,
        report.already_present,
        report.skipped.len()
    );
    for s in report.skipped.iter().take(20) {
        out.push_str(&format!(
            "  skipped {}: {}\n",
            terminal_safe(&s.id),
            terminal_safe(&s.reason)
        ));
    }
    if report.skipped.len() > 20 {
        out.push_str(&format!("  … and {} more\n", report.skipped.len() - 20));
    }
    for s in report.repaired.iter().take(20) {
        out.push_str(&format!(
            "  repaired {}: {}\n",
            terminal_safe(&s.id),
            terminal_safe(&s.reason)
        ));
    }
    if report.repaired.len() > 20 {
        out.push_str(&format!(
            "  … and {} more repaired\n",
            report.repaired.len() - 20
        ));
    }
    out.push_str(&format!(
        "Closets: {} found, {} filed, {} skipped.\n",
        report.closets_found,
        report.closets_imported,
        report.closets_skipped.len()
    ));
    for s in report.closets_skipped.iter().take(20) {
        out.push_str(&format!(
            "  skipped {}: {}\n",
            terminal_safe(&s.id),
            terminal_safe(&s.reason)
        ));
    }
    out.push_str(&format!("Knowledge graph: {}\n", report.knowledge_graph));
    out.push_str(&format!("Coordination log: {}\n", report.coordination_log));
    out.push_str(&format!("Tunnels: {}\n", report.tunnels));
    out.push_str(&format!("Hallways: {}\n", report.hallways));
    out
}

/// What `mempalace mcp` prints at a terminal: the lines that register this server, started
/// as `program` with `server_args` (`mcp` and the flags it was given), with the AI clients
/// (3.11's quick setup, for our one binary), and how to install the hooks.
pub fn mcp_client_setup(program: &str, server_args: &[String]) -> String {
    use mempalace::ingest::hooks::install::shell_word;
    let server = std::iter::once(program)
        .chain(server_args.iter().map(String::as_str))
        .map(shell_word)
        .collect::<Vec<_>>()
        .join(" ");
    let names_palace = server_args.iter().any(|a| a == "--palace");
    let mut out = String::new();
    let _ = writeln!(out, "MemPalace MCP quick setup:");
    let _ = writeln!(out, "  claude mcp add mempalace -- {server}");
    let _ = writeln!(out, "  codex mcp add mempalace -- {server}");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Other clients (Cursor, Claude Desktop, …): an \"mcpServers\" entry:"
    );
    let entry = serde_json::json!({"mempalace": {"command": program, "args": server_args}});
    let _ = writeln!(out, "  {entry}");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Run the server directly (an MCP client on stdin/stdout):"
    );
    let _ = writeln!(out, "  {server} < requests.jsonl");
    if !names_palace {
        let _ = writeln!(out);
        let _ = writeln!(out, "Optional custom palace:");
        let _ = writeln!(
            out,
            "  claude mcp add mempalace -- {} mcp --palace /path/to/palace",
            shell_word(program)
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "File every session automatically (harness hooks):");
    for harness in ["claude-code", "codex"] {
        let _ = writeln!(
            out,
            "  {} hook install --harness {harness}",
            shell_word(program)
        );
    }
    out
}

/// `sync`'s report, laid out as 3.11's `sync` lays out its own.
pub fn sync(r: &mempalace::core::palace::SyncReport, palace: &std::path::Path) -> String {
    let rule = "=".repeat(55);
    let thin = "-".repeat(55);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{rule}\n  MemPalace Sync -- drawers of deleted, moved or ignored files\n{rule}"
    );
    let _ = writeln!(
        out,
        "  Palace:   {}",
        terminal_safe(&palace.display().to_string())
    );
    if let Some(w) = &r.wing {
        let _ = writeln!(out, "  Wing:     {}", terminal_safe(w));
    }
    if let Some(p) = &r.project_dir {
        let _ = writeln!(out, "  Project:  {}", terminal_safe(p));
    }
    let mode = if r.dry_run {
        "DRY RUN (no deletions)"
    } else {
        "APPLY (deleting drawers)"
    };
    let _ = writeln!(out, "  Mode:     {mode}\n{thin}");
    let _ = writeln!(out, "  Scanned:        {}", r.drawers_checked);
    let _ = writeln!(
        out,
        "  Kept:           {}",
        r.drawers_checked - r.stale_drawers
    );
    let verb = if r.dry_run {
        "(would remove)"
    } else {
        "(removed)"
    };
    let count = |reason: &str| -> u64 {
        r.stale_sources
            .iter()
            .filter(|s| s.reason == reason)
            .map(|s| s.drawers)
            .sum()
    };
    let ignored = count("ignored");
    if ignored > 0 {
        let _ = writeln!(out, "  Gitignored:     {ignored}  {verb}");
    }
    let _ = writeln!(
        out,
        "  Missing:        {}  {verb}",
        r.stale_drawers - ignored
    );
    if !r.stale_sources.is_empty() {
        let _ = writeln!(out, "  Top sources to remove:");
        let mut sources: Vec<_> = r.stale_sources.iter().collect();
        sources.sort_by(|a, b| {
            b.drawers
                .cmp(&a.drawers)
                .then(a.source_file.cmp(&b.source_file))
        });
        for s in sources.iter().take(10) {
            let _ = writeln!(out, "    {} ({})", terminal_safe(&s.source_file), s.drawers);
        }
    }
    if r.dry_run && r.stale_drawers > 0 {
        let _ = writeln!(out, "  Re-run with --apply to commit these deletions.");
    } else if !r.dry_run {
        let _ = writeln!(out, "  Removed {} drawers.", r.deleted);
    }
    let _ = writeln!(out, "{rule}");
    out
}

/// `audit`'s text report at the terminal's width (`COLUMNS`, else the terminal's, else 80;
/// 40 to 100), with everything the palace supplied escaped.
pub fn audit(report: &serde_json::Value) -> String {
    let width = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|c| *c > 0)
        .or_else(|| {
            console::Term::stdout()
                .size_checked()
                .map(|(_, cols)| cols as usize)
        })
        .unwrap_or(80);
    terminal_safe_block(&mempalace::core::palace_audit::render_audit(report, width)) + "\n"
}

/// `sweep`'s report: a line per transcript, then the total for a folder.
pub fn sweep(r: &mempalace::ingest::hooks::sweep::SweepReport) -> String {
    let mut out = String::new();
    for t in &r.transcripts {
        let path = terminal_safe(&t.path.display().to_string()).into_owned();
        match &t.problem {
            Some(problem) if t.new_turns == 0 => {
                let _ = writeln!(out, "  Skipped {path}: {}", terminal_safe(problem));
            }
            problem => {
                let _ = writeln!(
                    out,
                    "  Swept {path} -> {}: +{} new turns ({} drawers){}",
                    terminal_safe(t.wing.as_deref().unwrap_or_default()),
                    t.new_turns,
                    t.drawers_filed,
                    problem
                        .as_deref()
                        .map_or(String::new(), |p| format!("; {}", terminal_safe(p)))
                );
            }
        }
    }
    if r.target.is_dir() {
        let _ = writeln!(
            out,
            "  Swept {}/{} files from {}: +{} new turns.",
            r.transcripts.len() - r.failed,
            r.transcripts.len(),
            terminal_safe(&r.target.display().to_string()),
            r.new_turns
        );
    }
    out
}

/// `split`'s report, laid out as MemPalace 3.11's.
pub fn split(r: &mempalace::ingest::split::SplitReport) -> String {
    let mut out = String::new();
    let shown = |p: &std::path::Path| terminal_safe(&p.display().to_string()).into_owned();
    let file_name = |p: &std::path::Path| {
        terminal_safe(&p.file_name().unwrap_or_default().to_string_lossy()).into_owned()
    };
    for skipped in &r.skipped {
        let _ = writeln!(
            out,
            "  SKIP: {} ({})",
            file_name(&skipped.path),
            skipped.reason
        );
    }
    if r.mega_files.is_empty() {
        let _ = writeln!(
            out,
            "No mega-files found in {} (min {} sessions).",
            shown(&r.source),
            r.min_sessions
        );
        return out;
    }
    let rule = "=".repeat(60);
    let thin = "-".repeat(60);
    let mode = if r.dry_run { "DRY RUN" } else { "SPLITTING" };
    let _ = writeln!(out, "\n{rule}\n  Mega-file splitter -- {mode}\n{rule}");
    let _ = writeln!(out, "  Source:      {}", shown(&r.source));
    let _ = writeln!(
        out,
        "  Output:      {}",
        r.output_dir
            .as_deref()
            .map_or("same dir as source".to_string(), shown)
    );
    let _ = writeln!(out, "  Mega-files:  {}\n{thin}\n", r.mega_files.len());
    for m in &r.mega_files {
        let _ = writeln!(
            out,
            "  {}  ({} sessions, {}KB)",
            file_name(&m.path),
            m.sessions,
            m.size_bytes / 1024
        );
        for part in &m.parts {
            let name = terminal_safe(&part.name);
            let _ = match (&part.skipped, r.dry_run) {
                (_, true) => writeln!(
                    out,
                    "  [{}/{}] {name}  ({} lines)",
                    part.number, m.sessions, part.lines
                ),
                (Some(why), false) => writeln!(out, "  SKIP: {name} ({})", terminal_safe(why)),
                (None, false) => writeln!(out, "  + {name}  ({} lines)", part.lines),
            };
        }
        match &m.backup {
            Some(backup) => {
                let _ = writeln!(out, "  -> Original renamed to {}\n", file_name(backup));
            }
            None => out.push('\n'),
        }
    }
    let _ = writeln!(out, "{thin}");
    let _ = if r.dry_run {
        writeln!(
            out,
            "  DRY RUN -- would create {} files from {} mega-files\n",
            r.files_created,
            r.mega_files.len()
        )
    } else {
        writeln!(
            out,
            "  Done -- created {} files from {} mega-files\n",
            r.files_created,
            r.mega_files.len()
        )
    };
    out
}

/// `repair-status`'s report, laid out as MemPalace 3.11's.
pub fn repair_status(r: &mempalace::core::store_health::RepairStatus) -> String {
    use mempalace::core::store_health::HealthVerdict;
    let rule = "=".repeat(55);
    let mut out = format!(
        "\n{rule}\n  MemPalace Repair -- Status\n{rule}\n\n  Palace: {}\n",
        terminal_safe(&r.palace_path.display().to_string())
    );
    let s = &r.store;
    let _ = writeln!(out, "\n  [drawers]");
    let _ = writeln!(out, "    backend:        {}", s.backend);
    let _ = writeln!(out, "    rows:           {}", s.rows);
    if let Some(f) = s.fragments {
        let _ = writeln!(out, "    fragments:      {f}");
    }
    for i in &s.indexes {
        let _ = writeln!(
            out,
            "    index:          {} ({}): {} row(s) not covered yet, {} part(s)",
            terminal_safe(&i.name),
            i.kind,
            i.unindexed_rows,
            i.parts
        );
    }
    let verdict = match r.status {
        HealthVerdict::Ok => "OK",
        HealthVerdict::Empty => "EMPTY",
        HealthVerdict::Attention => "ATTENTION",
    };
    let _ = writeln!(out, "    status:         {verdict}");
    let _ = writeln!(out, "  [knowledge graph]");
    match &r.knowledge_graph {
        Some(kg) => {
            let _ = writeln!(
                out,
                "    entities:       {}\n    facts:          {} ({} current)",
                kg.entities, kg.triples, kg.current_facts
            );
        }
        None => {
            let _ = writeln!(out, "    (unreadable)");
        }
    }
    for finding in &r.findings {
        let _ = writeln!(out, "    note:           {}", terminal_safe(finding));
    }
    out.push('\n');
    out
}

/// `verify`'s report: each check and what it found.
pub fn verify_report(r: &mempalace::core::palace_verify::VerifyReport) -> String {
    let mut out = format!(
        "Palace: {}\nDrawers read: {}\n",
        terminal_safe(&r.palace_path.display().to_string()),
        r.drawers
    );
    for check in &r.checks {
        let verdict = if check.problems.is_empty() {
            "ok"
        } else {
            "PROBLEM"
        };
        let _ = writeln!(out, "  {:<16} {verdict}", check.name);
        for p in &check.problems {
            let _ = writeln!(out, "    problem: {}", terminal_safe(p));
        }
        for n in &check.notes {
            let _ = writeln!(out, "    note:    {}", terminal_safe(n));
        }
    }
    let _ = writeln!(
        out,
        "{}",
        if r.sound {
            "The palace is sound."
        } else {
            "Problems found: `mempalace repair` rebuilds what can be rebuilt."
        }
    );
    out
}

/// `repair`'s report: what was found, rebuilt, left, and the check after.
pub fn repair_report(r: &mempalace::core::palace_verify::RepairReport) -> String {
    let mut out = String::from("Before:\n");
    for p in r.before.problems() {
        let _ = writeln!(out, "  problem: {}", terminal_safe(&p));
    }
    if r.before.sound {
        let _ = writeln!(out, "  sound");
    }
    let _ = writeln!(out, "Repaired:");
    for line in &r.repaired {
        let _ = writeln!(out, "  {}", terminal_safe(line));
    }
    if !r.not_repaired.is_empty() {
        let _ = writeln!(out, "Could not repair:");
        for line in &r.not_repaired {
            let _ = writeln!(out, "  {}", terminal_safe(line));
        }
    }
    let _ = writeln!(out, "After:");
    for p in r.after.problems() {
        let _ = writeln!(out, "  problem: {}", terminal_safe(&p));
    }
    let _ = writeln!(
        out,
        "{}",
        if r.after.sound {
            "The palace is sound."
        } else {
            "Problems remain (above)."
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mempalace::core::reports::{SearchFilters, SearchHit};

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let hostile = "ok\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\r\tend";
        let r = SearchResponse {
            query: "q".into(),
            mode: "hybrid".into(),
            filters: SearchFilters {
                wing: Some("w\u{1b}[2J".into()),
                ..SearchFilters::default()
            },
            results: vec![SearchHit {
                drawer_id: "d".into(),
                text: format!("{hostile}\nsecond line"),
                wing: "w".into(),
                room: "r".into(),
                source_file: "evil\u{1b}[2J.md".into(),
                source_path: String::new(),
                chunk_index: 0,
                filed_at: String::new(),
                authored_at: None,
                conversation: None,
                similarity: 0.5,
                distance: 0.5,
                bm25_score: 0.0,
                score: 0.3,
                matched_via: "vector".into(),
                closet_boost: 0.0,
                closet_preview: None,
                also_in: Vec::new(),
            }],
        };
        let shown = search(&r);
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{shown:?}"
        );
        assert!(shown.contains("\\x1b]0;pwned\\x07"), "{shown}");
        assert!(shown.contains("evil\\x1b[2J.md"), "{shown}");
        assert!(shown.contains("\\x9b31m\\x0d\tend"), "{shown}");
        assert_eq!(terminal_safe("plain"), Cow::Borrowed("plain"));
        assert_eq!(terminal_safe("a\nb"), "a\\x0ab");
    }
}
