//! `mempalace hallways` and `mempalace tunnels`: the palace's links from the shell, thin calls
//! to the `Palace` methods the MCP tools use.

use anyhow::Result;
use clap::Subcommand;
use mempalace::core::palace::{HallwayRebuild, ProposalOutcome, WingHallways};
use mempalace::core::palace_links::{HallwayPage, NewTunnel, Tunnel, TunnelConnection};
use mempalace::core::tunnel_proposal::DEFAULT_MAX_PROPOSED_TUNNELS;
use mempalace::core::{Palace, PalaceError};

use crate::render::terminal_safe;

/// `mempalace tunnels …`: explicit links between rooms of different wings.
#[derive(Subcommand, Debug)]
pub enum TunnelsCommand {
    /// List explicit tunnels, all or those with WING at either end.
    List {
        /// Only tunnels touching this wing.
        #[arg(long)]
        wing: Option<String>,
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Link two existing rooms (running it again relabels the same tunnel).
    Create {
        /// Wing of the source.
        source_wing: String,
        /// Room of the source.
        source_room: String,
        /// Wing of the target.
        target_wing: String,
        /// Room of the target.
        target_room: String,
        /// What connects them.
        #[arg(long, default_value = "")]
        label: String,
        /// Print the tunnel as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a tunnel by id.
    Delete {
        /// The tunnel's id.
        tunnel_id: String,
    },
    /// Remove artifact tunnels: on a generic entity name, with an end in a wing that has no
    /// drawers, or another spelling of a kept tunnel (the most followed is kept). A dry run
    /// unless --yes.
    Prune {
        /// Remove them.
        #[arg(long)]
        yes: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Plan entity tunnels: entities whose hallways are strong in two wings, links that do
    /// not exist yet, best first (a wing no tunnel reaches comes first). Saves the plan to
    /// PALACE/tunnels/proposal.json for review; --yes makes the saved plan's rows into
    /// tunnels.
    Propose {
        /// Most tunnels proposed (0: the default, 60).
        #[arg(long, default_value_t = 60, allow_negative_numbers = true)]
        max: i64,
        /// Create the tunnels of the saved plan.
        #[arg(long)]
        yes: bool,
        /// Print the plan or the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Where the tunnels of a room lead.
    Follow {
        /// The room's wing.
        wing: String,
        /// The room.
        room: String,
        /// Print the connections as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `hallways --prune-spellings [--yes]`: 3.11's report of spelling artifacts, removed with
/// `yes`.
pub async fn prune_hallway_spellings(palace: &Palace, yes: bool, json: bool) -> Result<()> {
    let prune = palace.prune_hallway_spellings(yes).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&prune)?);
        return Ok(());
    }
    let doomed = prune.self_links + prune.duplicates;
    println!(
        "  {doomed} of {} hallways are spelling artifacts: {} self-links, {} duplicate spellings.",
        prune.total, prune.self_links, prune.duplicates
    );
    for (wing, n) in prune.by_wing.iter().take(8) {
        println!("    {}: {n}", terminal_safe(wing));
    }
    for label in prune.sample.iter().take(5) {
        println!("    e.g. {}", terminal_safe(label));
    }
    if doomed > 0 {
        if yes {
            println!("  Removed {doomed}.");
        } else {
            println!("  Dry run. Re-run with --yes to remove them.");
        }
    }
    Ok(())
}

/// `hallways --rebuild [--wing W]`: 3.11's rebuild report, one line per wing.
pub async fn rebuild_hallways(palace: &Palace, wing: Option<&str>, json: bool) -> Result<()> {
    let options = HallwayRebuild::default();
    let rebuilt = match wing {
        Some(w) => vec![WingHallways {
            wing: w.to_string(),
            hallways: palace.rebuild_wing_hallways(w, &options).await?.len(),
        }],
        None => palace.rebuild_hallways(&options).await?,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&rebuilt)?);
        return Ok(());
    }
    let total: usize = rebuilt.iter().map(|w| w.hallways).sum();
    for w in &rebuilt {
        println!(
            "  {:<36} {:>7} hallways",
            terminal_safe(&w.wing),
            w.hallways
        );
    }
    println!(
        "  Rebuilt {total} hallways across {} wing(s).",
        rebuilt.len()
    );
    Ok(())
}

/// `tunnels propose [--max N] [--yes]`: 3.11's plan and its application, worded as 3.11's.
async fn propose_tunnels(palace: &Palace, max: i64, yes: bool, json: bool) -> Result<()> {
    if yes {
        let outcome = match palace.apply_tunnel_proposal().await {
            Err(PalaceError::InvalidInput { reason, .. }) => {
                println!("  Proposal is invalid: {reason}");
                std::process::exit(1);
            }
            other => other?,
        };
        if json {
            println!("{}", serde_json::to_string_pretty(&outcome)?);
        }
        match outcome {
            ProposalOutcome::Missing { path } => {
                if !json {
                    println!(
                        "  No proposal at {}. Run without --yes first.",
                        terminal_safe(&path.display().to_string())
                    );
                }
                std::process::exit(1);
            }
            ProposalOutcome::AllStale { rows } => {
                if !json {
                    println!(
                        "  Every proposed tunnel names a wing that no longer exists ({rows} rows)."
                    );
                    println!("  Re-run `mempalace tunnels propose` against the current wings.");
                }
                std::process::exit(1);
            }
            ProposalOutcome::Applied(applied) if !json => {
                let mut note = String::new();
                if applied.stale > 0 {
                    note.push_str(&format!(
                        " Skipped {} row(s) naming a wing that no longer exists.",
                        applied.stale
                    ));
                }
                if applied.existing > 0 {
                    note.push_str(&format!(
                        " {} already existed, possibly under another spelling.",
                        applied.existing
                    ));
                }
                println!("  Created {} tunnels.{note}", applied.created);
            }
            ProposalOutcome::Applied(_) => {}
        }
        return Ok(());
    }
    let max = match max {
        0 => DEFAULT_MAX_PROPOSED_TUNNELS,
        n => usize::try_from(n).unwrap_or(0),
    };
    let plan = palace.propose_tunnels(max).await?;
    if plan.tunnels.is_empty() {
        if json {
            println!("{}", serde_json::to_string_pretty(&plan)?);
        } else {
            println!("  No shared entities strong enough to propose a tunnel that does not exist.");
        }
        return Ok(());
    }
    let path = palace.save_tunnel_proposal(&plan)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
        return Ok(());
    }
    println!(
        "  {} candidate links; proposing the strongest {}:",
        plan.candidates,
        plan.tunnels.len()
    );
    for row in plan.tunnels.iter().take(30) {
        println!(
            "    {:<28} {} <-> {}  ({})",
            terminal_safe(&row.entity),
            terminal_safe(&row.wing_a),
            terminal_safe(&row.wing_b),
            row.strength
        );
    }
    if plan.tunnels.len() > 30 {
        println!("    ... {} more in the plan file", plan.tunnels.len() - 30);
    }
    println!(
        "\n  Plan saved to {}. Delete rows you do not want, then re-run with --yes.",
        terminal_safe(&path.display().to_string())
    );
    Ok(())
}

/// `hallways [--wing W] [--limit N] [--json]`: 3.11's listing, strongest first.
pub async fn hallways(palace: &Palace, wing: Option<&str>, limit: usize, json: bool) -> Result<()> {
    // The palace bounds the page (1 to 500).
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let page = palace.list_hallways(wing, Some(limit), None).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&page)?);
    } else {
        print!("{}", render_hallways(&page));
    }
    Ok(())
}

/// Runs `tunnels …`.
pub async fn tunnels(palace: &Palace, command: TunnelsCommand) -> Result<()> {
    match command {
        TunnelsCommand::List { wing, json } => {
            let tunnels = palace.list_tunnels(wing.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tunnels)?);
            } else if tunnels.is_empty() {
                println!("No tunnels.");
            } else {
                println!("  {} tunnel(s):", tunnels.len());
                for t in &tunnels {
                    println!("{}", tunnel_line(t));
                }
            }
        }
        TunnelsCommand::Create {
            source_wing,
            source_room,
            target_wing,
            target_room,
            label,
            json,
        } => {
            let tunnel = palace
                .create_tunnel(
                    NewTunnel::new(source_wing, source_room, target_wing, target_room)
                        .with_label(label),
                )
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tunnel)?);
            } else {
                println!("Tunnel {}", terminal_safe(&tunnel.id));
                println!("{}", tunnel_line(&tunnel));
            }
        }
        TunnelsCommand::Delete { tunnel_id } => {
            let deleted = palace.delete_tunnel(&tunnel_id).await?;
            if deleted.existed {
                println!("Deleted {}", terminal_safe(&deleted.deleted));
            } else {
                println!("No tunnel {}", terminal_safe(&deleted.deleted));
            }
        }
        TunnelsCommand::Prune { yes, json } => {
            let prune = palace.prune_tunnels(yes).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&prune)?);
                return Ok(());
            }
            let removed = prune.removed;
            println!(
                "  {removed} of {} tunnels are artifacts: {} generic tokens, {} dangling endpoints, {} duplicate spellings.",
                prune.total, prune.generic, prune.dangling, prune.duplicates
            );
            if removed > 0 {
                if yes {
                    println!("  Removed {removed}.");
                } else {
                    println!("  Dry run. Re-run with --yes to remove them.");
                }
            }
        }
        TunnelsCommand::Propose { max, yes, json } => {
            propose_tunnels(palace, max, yes, json).await?
        }
        TunnelsCommand::Follow { wing, room, json } => {
            let connections = palace.follow_tunnels(&wing, &room).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&connections)?);
            } else if connections.is_empty() {
                println!(
                    "No tunnels lead from {}/{}.",
                    terminal_safe(&wing),
                    terminal_safe(&room)
                );
            } else {
                for c in &connections {
                    println!("{}", connection_line(c));
                }
            }
        }
    }
    Ok(())
}

/// 3.11's hallway listing: the count, then each label (else `a <-> b`), indented.
pub fn render_hallways(page: &HallwayPage) -> String {
    if page.total == 0 {
        return "No hallways yet -- they are built from drawer entities when you mine.\n".into();
    }
    let mut out = format!("  {} hallway(s):\n", page.total);
    for h in &page.hallways {
        let label = if h.label.is_empty() {
            format!("{} <-> {}", h.entity_a, h.entity_b)
        } else {
            h.label.clone()
        };
        out.push_str(&format!("    {}\n", terminal_safe(&label)));
    }
    out
}

fn tunnel_line(t: &Tunnel) -> String {
    let label = if t.label.is_empty() {
        String::new()
    } else {
        format!("  ({})", t.label)
    };
    terminal_safe(&format!(
        "    {}/{} <-> {}/{}{label}  [{}]",
        t.source.wing, t.source.room, t.target.wing, t.target.room, t.id
    ))
    .into_owned()
}

fn connection_line(c: &TunnelConnection) -> String {
    let mut line = format!(
        "  {} {}/{}",
        c.direction, c.connected_wing, c.connected_room
    );
    if !c.label.is_empty() {
        line.push_str(&format!("  ({})", c.label));
    }
    if let Some(preview) = &c.drawer_preview {
        line.push_str(&format!(" :: {preview}"));
    }
    terminal_safe(&line).into_owned()
}
