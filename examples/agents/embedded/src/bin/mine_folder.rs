//! Mining a folder from an agent, with its own progress report and a stop on Ctrl-C: the same
//! call the `mempalace mine` command and the MCP `mine` tool make.
//!
//! Run: `cargo run -p mempalace-agent-embedded --bin mine_folder FOLDER [PALACE]` (add
//! `--convos` for a folder of chat exports and transcripts).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mempalace::ingest::MineOutcome;
use mempalace::prelude::*;

/// Prints a line every 100 drawers; says what was skipped.
#[derive(Default)]
struct Log {
    last: AtomicU64,
}

impl Progress for Log {
    fn event(&self, event: ProgressEvent<'_>) {
        match event {
            ProgressEvent::Started { work, total } => eprintln!("mining {total} ({work:?})"),
            ProgressEvent::Advanced {
                done,
                drawers_filed,
            } => {
                if drawers_filed >= self.last.load(Ordering::Relaxed) + 100 {
                    self.last.store(drawers_filed, Ordering::Relaxed);
                    eprintln!("{done} done, {drawers_filed} drawers filed");
                }
            }
            ProgressEvent::Skipped { item, reason } => eprintln!("skipped {item}: {reason}"),
            ProgressEvent::Failed { item, reason } => eprintln!("failed {item}: {reason}"),
            ProgressEvent::Finished => {}
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let convos = args.iter().any(|a| a == "--convos");
    args.retain(|a| a != "--convos");
    let Some(folder) = args.first() else {
        return Err("usage: mine_folder FOLDER [PALACE] [--convos]".into());
    };
    let temporary = std::env::temp_dir().join(format!("mine-folder-{}", std::process::id()));
    let palace_folder = args.get(1).map(Into::into).unwrap_or(temporary);
    let palace = Arc::new(mempalace::open(&palace_folder).await?);

    let request = if convos {
        MineRequest::conversations(folder)
    } else {
        MineRequest::project(folder)
    };
    let cancel = Cancellation::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    match mempalace::ingest::mine(Arc::clone(&palace), &request, &Log::default(), &cancel).await? {
        MineOutcome::Project { wing, report } => println!(
            "{} files into {} drawers in wing {wing} ({} unchanged)",
            report.files_mined, report.drawers_filed, report.files_unchanged
        ),
        MineOutcome::Conversations(report) => println!(
            "{} conversations into {} drawers",
            report.conversations, report.filed.drawers_filed
        ),
        MineOutcome::DryRun(dry) => println!("{} files would be mined", dry.files),
    }
    if let mempalace::core::reports::Status::Ready(status) = palace.status().await? {
        println!(
            "the palace holds {} drawers: {:?}",
            status.total_drawers, status.wings
        );
    }
    Ok(())
}
