//! An agent's memory with no model and no server: drawers in a [`MemoryStore`] (in this
//! process), the graph in SQLite in the palace folder, a word-hash embedder standing in for
//! a real model. The whole lifecycle: status → search → knowledge graph → add with the
//! duplicate check → wake-up. Runs anywhere, in CI on a clean clone.
//!
//! Run: `cargo run -p mempalace-agent-offline --bin offline_memory`.

use std::sync::Arc;

use mempalace::MemoryStore;
use mempalace::prelude::*;
use mempalace_agent_offline::WordHashEmbedder;

const DIMENSION: usize = 64;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = std::env::temp_dir().join(format!("offline-memory-{}", std::process::id()));
    let palace = PalaceBuilder::new(&folder)
        .store(Arc::new(MemoryStore::new(DIMENSION)))
        .embedder(Arc::new(WordHashEmbedder::new(DIMENSION)))
        .open_or_create()
        .await?;

    // 1. Status.
    if let mempalace::core::reports::Status::Ready(report) = palace.status().await? {
        println!("{} drawers in {}", report.total_drawers, report.palace_path);
    }
    // 2. Remember, then recall.
    for (room, text) in [
        (
            "deploys",
            "Deploys run every Tuesday from the release branch after the freeze.",
        ),
        (
            "billing",
            "Stripe webhooks retry for three days, so handlers must be idempotent.",
        ),
    ] {
        let filed = palace
            .add_drawer(NewDrawer::new("wing_ops", room, text))
            .await?;
        assert!(filed.drawer_id().is_some(), "{filed:?}");
    }
    let found = palace
        .search("when do deploys run", Some("wing_ops"), None, 1)
        .await?;
    assert_eq!(found.results[0].room, "deploys");
    println!("recalled: {}", found.results[0].text);
    // 3. The knowledge graph.
    palace
        .kg_add(NewTriple::new("release", "happens_on", "Tuesday"))
        .await?;
    let facts = palace.kg_query("release", None, Direction::Both).await?;
    assert_eq!(facts.facts[0].object, "Tuesday");
    // 4. The same memory again is refused as a duplicate.
    let again = palace
        .add_drawer(NewDrawer::new(
            "wing_ops",
            "deploys",
            "Deploys run every Tuesday from the release branch after the freeze.",
        ))
        .await?;
    assert!(
        again.drawer_id().is_none(),
        "a duplicate was filed: {again:?}"
    );
    // 5. What a new session starts with.
    let woken = palace.wake_up(&WakeUpRequest::default()).await?;
    assert!(woken.text.contains("Tuesday"));
    println!("wake-up: {} tokens", woken.tokens);
    std::fs::remove_dir_all(&folder)?;
    println!("offline agent: ok");
    Ok(())
}
