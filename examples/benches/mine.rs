//! Where mining time goes, on the real stack (all-MiniLM-L6-v2 + LanceDB + SQLite): a
//! generated project of prose files is mined into a fresh palace, and the table shows wall
//! time, time inside the embedder and time inside store writes. The target is an embedder
//! share of at least 80%.
//! Run: `cargo bench --workspace --profile dev --bench mine` (MEMPALACE_BENCH_FILES sets
//! the file count, default 200).

use std::sync::Arc;

use mempalace::PalaceBuilder;
use mempalace::core::Cancellation;
use mempalace::ingest::NoProgress;
use mempalace::ingest::project::detect_rooms;
use mempalace::ingest::project_mine::{MineOptions, mine_project};

fn paragraph(i: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "team",
        "decided",
        "to",
        "move",
        "billing",
        "webhooks",
        "into",
        "a",
        "queue",
        "because",
        "retries",
        "were",
        "slow",
        "and",
        "customers",
        "saw",
        "duplicate",
        "invoices",
        "during",
        "the",
        "migration",
        "week",
    ];
    (0..110)
        .map(|w| WORDS[(i * 13 + w * 7) % WORDS.len()])
        .collect::<Vec<_>>()
        .join(" ")
        + ".\n\n"
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let files: usize = std::env::var("MEMPALACE_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir()?;
    let project = dir.path().join("project");
    for f in 0..files {
        let folder = project.join(["docs", "src", "notes", "ops"][f % 4]);
        std::fs::create_dir_all(&folder)?;
        let text: String = (0..4).map(|p| paragraph(f * 4 + p)).collect();
        std::fs::write(folder.join(format!("file{f}.md")), text)?;
    }
    let embedder = mempalace::minilm(None);
    embedder.warm_up().await?; // model load is not mining time
    let palace = Arc::new(
        PalaceBuilder::new(dir.path().join("palace"))
            .embedder(embedder)
            .open()
            .await?,
    );
    let mine = MineOptions::new("bench", detect_rooms(&project)?);
    let r = mine_project(palace, &project, mine, &NoProgress, &Cancellation::new()).await?;
    println!("| measure | value |\n| --- | --- |");
    println!(
        "| files / drawers | {} / {} |",
        r.files_mined, r.drawers_filed
    );
    println!("| wall time | {:.2} s |", r.wall_seconds);
    println!(
        "| embedder (forward passes) | {:.2} s ({:.0}% of wall) |",
        r.embed_seconds,
        100.0 * r.embed_seconds / r.wall_seconds
    );
    println!(
        "| store writes | {:.2} s ({:.0}% of wall) |",
        r.store_seconds,
        100.0 * r.store_seconds / r.wall_seconds
    );
    println!(
        "| drawers per second | {:.1} |",
        r.drawers_filed as f64 / r.wall_seconds
    );
    Ok(())
}
