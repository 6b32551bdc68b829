//! `mempalace hallways` and `mempalace tunnels`: the palace's links from the shell, thin calls
//! to the `Palace` methods the MCP tools use.

use anyhow::Result;
use clap::Subcommand;
use mempalace::core::Palace;
use mempalace::core::palace_links::{HallwayPage, NewTunnel, Tunnel, TunnelConnection};

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
