//! Migration speed from MemPalace 3.11, on the real stack (all-MiniLM-L6-v2 + LanceDB +
//! SQLite): the 3.11 fixture palace (`tests/fixtures/mempalace-3.11`, made by 3.11 itself) is
//! grown to N drawers by copying its ChromaDB records under new ids (same documents and
//! metadata, so the texts are real 3.11 drawers), then `migrate` runs into a fresh palace and
//! again (nothing left to do). Prints drawers per second for both.
//! Run: `cargo bench --workspace --profile dev --bench migrate` (MEMPALACE_BENCH_DRAWERS sets
//! N, default 1,000).

use std::path::Path;
use std::sync::Arc;

use mempalace::PalaceBuilder;
use mempalace::ingest::NoProgress;
use mempalace::ingest::migrate::migrate;
use rusqlite::{Connection, params};

/// Copies the fixture's `chroma.sqlite3` into `to` with its drawer records repeated until
/// there are `n`, each copy under a new id (`…_copy{k}`).
fn grown_fixture(to: &Path, n: usize) -> anyhow::Result<()> {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/mempalace-3.11/palace/chroma.sqlite3");
    std::fs::create_dir_all(to)?;
    std::fs::copy(fixture, to.join("chroma.sqlite3"))?;
    let mut conn = Connection::open(to.join("chroma.sqlite3"))?;
    let tx = conn.transaction()?;
    let segment: String = tx.query_row(
        "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id
         WHERE c.name = 'mempalace_drawers' AND s.scope = 'METADATA'",
        [],
        |r| r.get(0),
    )?;
    let originals: Vec<(i64, String)> = tx
        .prepare("SELECT id, embedding_id FROM embeddings WHERE segment_id = ?1 ORDER BY id")?
        .query_map(params![segment], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut count = originals.len();
    let mut copy = 0;
    while count < n {
        copy += 1;
        for (rowid, id) in &originals {
            if count >= n {
                break;
            }
            tx.execute(
                "INSERT INTO embeddings (segment_id, embedding_id, seq_id)
                 SELECT segment_id, ?2, seq_id FROM embeddings WHERE id = ?1",
                params![rowid, format!("{id}_copy{copy}")],
            )?;
            let new_row = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO embedding_metadata (id, key, string_value, int_value, float_value, bool_value)
                 SELECT ?2, key, string_value, int_value, float_value, bool_value
                 FROM embedding_metadata WHERE id = ?1",
                params![rowid, new_row],
            )?;
            count += 1;
        }
    }
    tx.commit()?;
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(());
    }
    let n: usize = std::env::var("MEMPALACE_BENCH_DRAWERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    let dir = tempfile::tempdir()?;
    let from = dir.path().join("python_palace");
    grown_fixture(&from, n)?;
    let embedder = mempalace::minilm(None);
    embedder.warm_up().await?; // model load is not migration time
    let palace = Arc::new(
        PalaceBuilder::new(dir.path().join("palace"))
            .embedder(embedder)
            .open()
            .await?,
    );
    let first = migrate(Arc::clone(&palace), &from, &NoProgress).await?;
    let again = migrate(Arc::clone(&palace), &from, &NoProgress).await?;
    anyhow::ensure!(first.imported as usize == n && again.imported == 0);
    println!("| migrate from 3.11 | drawers | wall time | drawers/s |\n| --- | --- | --- | --- |");
    println!(
        "| first run | {} | {:.1} s | {:.1} |",
        first.imported,
        first.seconds,
        first.imported as f64 / first.seconds
    );
    println!(
        "| re-run (all already here) | {} | {:.2} s | {:.0} |",
        again.already_present,
        again.seconds,
        again.already_present as f64 / again.seconds
    );
    Ok(())
}
