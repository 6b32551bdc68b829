//! How an agent embeds MemPalace: open a palace on the embedded default, remember, recall,
//! record a fact that changes over time, write a diary entry, wake up.
//!
//! Run: `cargo run -p mempalace-agent-embedded --bin agent_memory [PALACE]` (after
//! `scripts/fetch-model.sh`); without PALACE it uses a temporary folder.

use mempalace::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temporary = std::env::temp_dir().join(format!("agent-memory-{}", std::process::id()));
    let folder = std::env::args().nth(1).map(Into::into).unwrap_or(temporary);
    let palace = mempalace::open(&folder).await?;

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
        .add_drawer(NewDrawer::new(
            "wing_myproject",
            "auth",
            "We replaced Auth0 with Clerk in January because Auth0's per-connection SAML pricing tripled our bill.",
        ))
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

    // Facts with time: what was true when.
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
        let objects: Vec<&str> = facts.facts.iter().map(|f| f.object.as_str()).collect();
        println!("as of {as_of}: {objects:?}");
    }

    palace
        .diary_write(
            "example-agent",
            "Learnt why the project uses Clerk.",
            Some("auth"),
            None,
        )
        .await?;

    // What the next session starts with.
    let woken = palace.wake_up(&WakeUpRequest::default()).await?;
    println!("{}", woken.text);
    Ok(())
}
