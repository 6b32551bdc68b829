//! `mempalace migrate-wings` and `mempalace wings split`: wing maintenance from the shell, in
//! MemPalace 3.11's words, as thin calls to `Palace::migrate_wing_names` and
//! `mempalace::ingest::wing_split`.

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
