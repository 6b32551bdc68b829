//! `mempalace migrate-wings`, `mempalace wings split` and `mempalace rooms apply`: wing and
//! room maintenance from the shell, in MemPalace 3.11's words, as thin calls to
//! `Palace::migrate_wing_names`, `mempalace::ingest::wing_split` and
//! `Palace::plan_room_reclassification`.

use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal, Write};

use anyhow::Result;
use clap::Subcommand;
use mempalace::core::Palace;
use mempalace::core::palace::WingNameMigration;
use mempalace::core::python_repr::python_repr;
use mempalace::ingest::IngestError;
use mempalace::ingest::wing_split::{
    self, SplitPlanError, WingSplitApplied, WingSplitPlan, apply_wing_split, load_plan,
    plan_wing_split, save_plan,
};

use crate::render::terminal_safe;

/// Exit status of a refused command (3.11's).
pub const REFUSED: i32 = 1;
/// Targets listed in a split report before "… more".
const SHOWN_TARGETS: usize = 25;

/// `mempalace wings …`: wing maintenance.
#[derive(Subcommand, Debug)]
pub enum WingsCommand {
    /// Re-key a wing that holds many projects' transcripts (e.g. all of ~/.claude/projects
    /// mined as one wing) into one wing per source project. Without --yes: plan into
    /// PALACE/wings/split-WING.json (edit the targets there); with --yes: apply that plan
    /// (drawers keep ids and vectors, closets follow, the wing's hallways are dropped).
    Split {
        /// The wing to split.
        #[arg(long)]
        wing: String,
        /// Apply the saved plan.
        #[arg(long)]
        yes: bool,
        /// Print the plan or the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `mempalace rooms …`: room maintenance.
#[derive(Subcommand, Debug)]
pub enum RoomsCommand {
    /// Give a wing's drawers the nearest room of its room set (PALACE/rooms/WING.json, as
    /// 3.11's `rooms propose` writes it or you write it) by their stored vectors: no drawer is
    /// embedded again, no LLM is asked. A dry run unless --yes. (3.11's `rooms propose` asks an
    /// LLM for the set and is not offered.)
    Apply {
        /// The wing.
        #[arg(long)]
        wing: String,
        /// Lowest cosine that moves a drawer.
        #[arg(long, default_value_t = mempalace::core::room_sets::DEFAULT_THRESHOLD)]
        threshold: f64,
        /// Rooms whose drawers may move: `all` or a comma list [default: the generic rooms].
        #[arg(long = "from", value_name = "ROOMS")]
        from_rooms: Option<String>,
        /// In a dry run, show up to N moves per room (at most 5).
        #[arg(long, default_value_t = 0)]
        show: usize,
        /// Write the room changes.
        #[arg(long)]
        yes: bool,
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `rooms apply`: 3.11's report, then the moves with --yes; returns the exit status.
pub async fn rooms(palace: &Palace, command: RoomsCommand) -> Result<i32> {
    use mempalace::core::room_sets::{from_rooms, load_room_set};
    let RoomsCommand::Apply {
        wing,
        threshold,
        from_rooms: from,
        show,
        yes,
        json,
    } = command;
    let set = match load_room_set(palace.path(), &wing) {
        Ok(set) => set,
        Err(e) => {
            println!("  {}", terminal_safe(&e.to_string()));
            return Ok(REFUSED);
        }
    };
    let scope = from_rooms(from.as_deref());
    let plan = palace
        .plan_room_reclassification(&wing, &set, threshold, scope.as_ref())
        .await?;
    if json {
        let moved = if yes && !plan.changes.is_empty() {
            Some(palace.apply_room_plan(&plan).await?)
        } else {
            None
        };
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"plan": plan, "moved": moved}))?
        );
        return Ok(0);
    }
    let sources: Vec<String> = plan
        .prototypes
        .iter()
        .map(|(name, src)| format!("{} ({src})", terminal_safe(name)))
        .collect();
    println!("  Room prototypes: {}", sources.join(", "));
    let label = match &scope {
        None => "all rooms".to_string(),
        Some(rooms) => rooms.iter().cloned().collect::<Vec<_>>().join(", "),
    };
    println!(
        "  Reclassifying drawers currently in: {}",
        terminal_safe(&label)
    );
    println!(
        "  {}: {} drawers; {} would move, {} stay, {} below threshold {threshold:.2} (kept), {} without embeddings (kept).",
        terminal_safe(&wing),
        plan.total,
        plan.changes.len(),
        plan.kept,
        plan.below_threshold,
        plan.no_embedding
    );
    for (room, n) in &plan.per_room {
        println!("    {:<28} {n}", terminal_safe(room));
    }
    if !yes {
        if show > 0 && !plan.changes.is_empty() {
            println!("\n  Examples of what would move (confidence, excerpt):");
            for (room, examples) in &plan.examples {
                println!("    -> {}", terminal_safe(room));
                for (confidence, text) in examples.iter().take(show.min(5)) {
                    let excerpt: String = text
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .chars()
                        .take(160)
                        .collect();
                    println!("       [{confidence:.2}] {}", terminal_safe(&excerpt));
                }
            }
        }
        if !plan.changes.is_empty() {
            println!("\n  Dry run. Re-run with --yes to write the room changes.");
        }
        return Ok(0);
    }
    if plan.changes.is_empty() {
        println!("  Nothing to change.");
        return Ok(0);
    }
    let moved = palace.apply_room_plan(&plan).await?;
    let partly = if plan.partly_moved > 0 {
        format!(
            " {} drawers came from a source that only partly moved, so its closet stayed put; re-mine that source for exact closets.",
            plan.partly_moved
        )
    } else {
        String::new()
    };
    println!(
        "  Moved {} drawers. {} closets followed.{partly} Run `mempalace audit` to see the new rooms score.",
        moved.drawers, moved.closets
    );
    Ok(0)
}

/// `migrate-wings`: the plan and, unless a dry run or declined, the migration.
pub async fn migrate_wings(palace: &Palace, dry_run: bool, yes: bool, json: bool) -> Result<()> {
    let plan = palace.migrate_wing_names(false).await?;
    if plan.renames.is_empty() {
        if json {
            println!("{}", serde_json::to_string_pretty(&plan)?);
        } else {
            println!("  All wing names are already normalized -- nothing to migrate.");
        }
        return Ok(());
    }
    if !json {
        print!("{}", render_wing_plan(&plan));
    }
    if dry_run {
        if json {
            println!("{}", serde_json::to_string_pretty(&plan)?);
        } else {
            println!("\n  DRY RUN -- no changes made.\n");
        }
        return Ok(());
    }
    if !yes && !confirm("  Apply this wing-name migration? [y/N] ")? {
        println!("  Aborted.");
        return Ok(());
    }
    let done = palace.migrate_wing_names(true).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&done)?);
    } else {
        let moved = done.moved.clone().unwrap_or_default();
        let mut parts = vec![format!("{} drawer(s)", moved.drawers)];
        if moved.closets > 0 {
            parts.push(format!("{} closet(s)", moved.closets));
        }
        println!("\n  Migrated {}.\n", parts.join(", "));
    }
    Ok(())
}

/// 3.11's plan listing: one line per wing renamed.
pub fn render_wing_plan(plan: &WingNameMigration) -> String {
    let mut out = String::from("\n  Wing-name migration plan:\n");
    for r in &plan.renames {
        let note = if r.merges {
            "  (MERGE into existing wing)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "    {} -> {}: {} drawer(s){note}",
            terminal_safe(&python_repr(&r.from)),
            terminal_safe(&python_repr(&r.to)),
            r.drawers
        );
    }
    out
}

/// Asks `question` at a terminal; anything but y/yes (or no terminal) is no.
fn confirm(question: &str) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    print!("{question}");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}

/// `wings split`: plan or apply; returns the exit status.
pub async fn wings(palace: &Palace, command: WingsCommand) -> Result<i32> {
    let WingsCommand::Split { wing, yes, json } = command;
    let palace_dir = palace.path().to_path_buf();
    let plan_path = wing_split::plan_path(&palace_dir, &wing);
    if !yes {
        if wing_split::split_pending(&palace_dir, &wing) {
            println!(
                "  A split of {} was interrupted. Its plan at {} is kept as is; re-run with --yes to finish it.",
                terminal_safe(&wing),
                plan_path.display()
            );
            return Ok(0);
        }
        let plan = plan_wing_split(palace, &wing).await?;
        if plan.projects.is_empty() {
            if json {
                println!("{}", plan.to_json());
            } else {
                println!(
                    "  No drawer in {} carries a project key; nothing to split.",
                    terminal_safe(&wing)
                );
            }
            return Ok(0);
        }
        let saved = save_plan(&palace_dir, &plan)?;
        if json {
            println!("{}", plan.to_json());
        } else {
            print!("{}", render_split_report(&plan));
            println!(
                "\n  Plan saved to {}. Edit targets there, then re-run with --yes.",
                saved.display()
            );
        }
        return Ok(0);
    }
    let plan = match load_plan(&palace_dir, &wing) {
        Ok(plan) => plan,
        Err(e @ (SplitPlanError::Missing { .. } | SplitPlanError::Invalid { .. })) => {
            println!("  {}", terminal_safe(&e.to_string()));
            return Ok(REFUSED);
        }
        Err(e) => return Err(e.into()),
    };
    if !json {
        print!("{}", render_split_report(&plan));
    }
    match wing_split::check_pending(&palace_dir, &plan) {
        Ok(true) if !json => {
            println!("  Resuming an interrupted split: finishing drawers, closets and hallways.")
        }
        Ok(_) => {}
        Err(e) => {
            println!("  {}", terminal_safe(&e.to_string()));
            return Ok(REFUSED);
        }
    }
    match apply_wing_split(palace, &plan).await {
        Ok(done) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&done)?);
            } else {
                println!("\n{}", render_split_done(&wing, &done));
            }
            Ok(0)
        }
        Err(IngestError::SplitPlan(e)) => {
            println!("  {}", terminal_safe(&e.to_string()));
            Ok(REFUSED)
        }
        Err(e) => Err(e.into()),
    }
}

/// 3.11's split report: projects, keyed and unkeyed drawers, then drawers per target.
pub fn render_split_report(plan: &WingSplitPlan) -> String {
    let mut out = format!(
        "  {}: {} source projects, {} drawers with a project key, {} without one (stay).\n  Targets:\n",
        terminal_safe(&plan.wing),
        plan.projects.len(),
        plan.keyed_drawers(),
        plan.unresolved
    );
    let targets = plan.targets();
    for (target, n, hows) in targets.iter().take(SHOWN_TARGETS) {
        let hows: Vec<&str> = hows.iter().map(|h| h.as_str()).collect();
        let _ = writeln!(
            out,
            "    {:<32} {n:>7}  ({})",
            terminal_safe(target),
            hows.join(", ")
        );
    }
    if targets.len() > SHOWN_TARGETS {
        let _ = writeln!(
            out,
            "    ... {} more targets in the plan file",
            targets.len() - SHOWN_TARGETS
        );
    }
    out
}

/// 3.11's closing line of a split.
pub fn render_split_done(wing: &str, done: &WingSplitApplied) -> String {
    format!(
        "  Moved {} drawers into {} wings and {} closets; {} skipped; {} hallway records of {} dropped.",
        done.moved,
        done.target_wings,
        done.closets_moved,
        done.skipped,
        done.hallways_dropped,
        terminal_safe(wing)
    )
}
