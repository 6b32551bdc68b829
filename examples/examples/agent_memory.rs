//! How an agent embeds MemPalace: open a palace on the default stack, remember, recall,
//! record a fact that changes over time, and write a diary entry.
//!
//! Run: `cargo run -p mempalace-cli --example agent_memory` (after scripts/fetch-model.sh).

use std::sync::Arc;

use mempalace_core::knowledge_graph::Supersede;
use mempalace_core::palace::NewDrawer;
use mempalace_core::{Direction, NewTriple, Palace};
use mempalace_embed_candle::MiniLmEmbedder;
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use mempalace_store_lance::{LanceOptions, LanceStore};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("palace");
    let embedder = Arc::new(MiniLmEmbedder::load_resolved(None)?);
    let store = Arc::new(LanceStore::open(LanceOptions::new(path.join("lance"), 384)).await?);
    let kg = Arc::new(SqliteKnowledgeGraph::in_palace(&path));
    let palace = Palace::new(&path, embedder, store, kg)?;

    // Remember.
    let mut auth_drawer = None;
    for (room, text) in [
        (
            "auth",
            "We replaced Auth0 with Clerk in January because Auth0's per-connection SAML pricing tripled our bill.",
        ),
        (
            "billing",
            "Stripe retries failed webhooks for three days, so the webhook handler must be idempotent.",
        ),
        (
            "team",
            "Riley owns the CSV export; Max is on call this week.",
        ),
    ] {
        let outcome = palace
            .add_drawer(NewDrawer::new("wing_myproject", room, text))
            .await?;
        println!("filed: {}", serde_json::to_string(&outcome)?);
        if room == "auth" {
            auth_drawer = outcome.drawer_id().map(str::to_string);
        }
    }
    // The same memory again is refused as a duplicate.
    let again = palace
        .add_drawer(NewDrawer::new("wing_myproject", "auth", "We replaced Auth0 with Clerk in January because Auth0's per-connection SAML pricing tripled our bill."))
        .await?;
    println!("again: {}", serde_json::to_string(&again)?);

    // Recall by meaning.
    let found = palace
        .search(
            "why did we change login provider?",
            Some("wing_myproject"),
            None,
            2,
        )
        .await?;
    println!("{}", serde_json::to_string_pretty(&found)?);

    // Facts with time.
    palace
        .kg_add(NewTriple::new("MyProject", "uses", "Auth0").valid_from("2024-03-01"))
        .await?;
    palace
        .kg_supersede(Supersede {
            subject: "MyProject".into(),
            predicate: "uses".into(),
            old_object: "Auth0".into(),
            new_object: "Clerk".into(),
            at: Some("2026-01-15".into()),
            confidence: 1.0,
            // The fact points back at the drawer it was learnt from.
            source_closet: auth_drawer,
        })
        .await?;
    for as_of in ["2025-06-01", "2026-02-01"] {
        let facts = palace
            .kg_query("MyProject", Some(as_of), Direction::Outgoing)
            .await?;
        println!(
            "as of {as_of}: {:?}",
            facts.facts.iter().map(|f| &f.object).collect::<Vec<_>>()
        );
    }

    palace
        .diary_write(
            "example-agent",
            "Learnt why the project uses Clerk.",
            Some("auth"),
            None,
        )
        .await?;
    println!(
        "{}",
        serde_json::to_string_pretty(&palace.status().await?)?
            .lines()
            .take(12)
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok(())
}
