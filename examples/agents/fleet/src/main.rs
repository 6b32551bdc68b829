//! A fleet host: every host of a fleet opens the same palace (one Qdrant collection, one
//! PostgreSQL schema, named for the palace id in its `palace.json`), so what one agent files
//! every other agent finds, and the coordination log (events, tasks), tunnels and closets are
//! shared through PostgreSQL as well. Built with `default-features = false, features = ["qdrant",
//! "postgres", "minilm"]`, it compiles no LanceDB or DataFusion.
//!
//! Run: `QDRANT_URL=http://127.0.0.1:6334 MEMPALACE_KG_POSTGRES_URL=postgres://… cargo run -p
//! mempalace-agent-fleet -- PALACE` (after `scripts/fetch-model.sh`); give every other host a
//! copy of PALACE/palace.json.

use mempalace::core::coordination::{EventQuery, NewEvent};
use mempalace::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(folder) = std::env::args().nth(1) else {
        return Err(
            "usage: fleet PALACE (with QDRANT_URL and MEMPALACE_KG_POSTGRES_URL set)".into(),
        );
    };
    let qdrant = std::env::var("QDRANT_URL").map_err(|_| "set QDRANT_URL")?;
    let postgres =
        std::env::var("MEMPALACE_KG_POSTGRES_URL").map_err(|_| "set MEMPALACE_KG_POSTGRES_URL")?;
    let mut builder = PalaceBuilder::new(&folder)
        .backend(BackendKind::Qdrant)
        .qdrant_url(qdrant)
        .knowledge_graph_postgres(postgres);
    if let Ok(key) = std::env::var("QDRANT_API_KEY") {
        builder = builder.qdrant_api_key(key);
    }
    // Creates the palace (and its palace.json) on the first host; opens it on the others.
    let palace = builder.open_or_create().await?;
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "this host".into());
    let filed = palace
        .add_drawer(NewDrawer::new(
            "wing_fleet",
            "hosts",
            format!("{host} joined the fleet and files its memories into the shared palace."),
        ))
        .await?;
    println!("filed: {}", serde_json::to_string(&filed)?);
    palace
        .kg_add(NewTriple::new(host.as_str(), "member_of", "fleet"))
        .await?;
    let members = palace.kg_query("fleet", None, Direction::Incoming).await?;
    println!("fleet members: {}", members.count);
    // The coordination log is shared too: this host says it joined, and sees who else did.
    let mut joined = NewEvent::new("host.joined", "fleet", "hosts", host.as_str());
    joined.to_agent = Some("*".into());
    palace.event_append(&joined).await?;
    let seen = palace
        .event_list(&EventQuery {
            event_type: Some("host.joined".into()),
            ..EventQuery::default()
        })
        .await?;
    println!("hosts that announced themselves: {}", seen.count);
    Ok(())
}
