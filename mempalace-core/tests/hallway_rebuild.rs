//! `Palace::rebuild_wing_hallways` on a palace: drawers mined before drawers carried names
//! are named from their text (so an upgrade keeps a wing's hallways and their dynamics),
//! drawers an agent filed are not, a cancelled rebuild changes nothing, and entity tunnels
//! follow the hallways.

use std::sync::Arc;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::palace::HallwayRebuild;
use mempalace_core::palace_links::{MemoryLinks, PalaceLinks};
use mempalace_core::{AddedBy, Cancellation, Drawer, DrawerMetadata, MemoryStore, Palace};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use serde_json::json;

const DIM: usize = 64;

fn drawer(id: &str, wing: &str, added_by: AddedBy, text: &str) -> Drawer {
    Drawer {
        id: id.into(),
        text: text.into(),
        metadata: DrawerMetadata {
            wing: wing.into(),
            room: "general".into(),
            source_file: format!("/{wing}/{id}.md"),
            chunk_index: 0,
            added_by,
            filed_at: "2026-01-01T00:00:00".into(),
            authored_at: None,
            conversation: None,
            entities: Vec::new(),
        },
    }
}

#[tokio::test]
async fn drawers_mined_before_names_are_named_from_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    // The hallway 3.11 (or an earlier mine) left, followed 7 times.
    let links = Arc::new(MemoryLinks::with_hallway_records(vec![json!({
        "id": "hallway_alpha_Aya_Lumi_x", "wing": "alpha", "entity_a": "Aya",
        "entity_b": "Lumi", "co_occurrence_count": 2, "access_count": 7, "strength": 2.0
    })]));
    let palace = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(MemoryStore::new(DIM)),
        Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
    )
    .unwrap()
    .with_links(links.clone());
    let about = "Aya met Lumi. Aya and Lumi talked about Quintavex. Quintavex works.";
    let mut drawers = Vec::new();
    for (i, wing) in ["alpha", "alpha", "alpha", "beta", "beta", "beta"]
        .into_iter()
        .enumerate()
    {
        drawers.push(drawer(&format!("m{i}"), wing, AddedBy::Mine, about));
    }
    // An agent's drawer naming others is not counted (3.11's MCP drawers carry no names).
    for i in 0..3 {
        drawers.push(drawer(
            &format!("a{i}"),
            "alpha",
            AddedBy::Mcp,
            "Zorbrook and Drossmoor. Zorbrook and Drossmoor.",
        ));
    }
    palace.import_drawers(&drawers).await.unwrap();

    let cancelled = HallwayRebuild {
        min_count: Some(2),
        cancel: Cancellation::new(),
    };
    cancelled.cancel.cancel();
    assert!(
        palace
            .rebuild_wing_hallways("alpha", &cancelled)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(links.hallway_records().await.unwrap().len(), 1, "untouched");

    let options = HallwayRebuild {
        min_count: Some(2),
        ..HallwayRebuild::default()
    };
    let built = palace
        .rebuild_wing_hallways("alpha", &options)
        .await
        .unwrap();
    let pairs: Vec<(String, String, u64)> = built
        .iter()
        .map(|h| {
            (
                h.entity_a.clone(),
                h.entity_b.clone(),
                h.co_occurrence_count,
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("Aya".into(), "Lumi".into(), 3),
            ("Aya".into(), "Quintavex".into(), 3),
            ("Lumi".into(), "Quintavex".into(), 3),
        ]
    );
    let records = links.hallway_records().await.unwrap();
    let aya_lumi = records
        .iter()
        .find(|r| r["entity_a"] == "Aya" && r["entity_b"] == "Lumi")
        .unwrap();
    assert_eq!(
        aya_lumi["access_count"], 7,
        "dynamics kept across the upgrade"
    );

    palace
        .rebuild_wing_hallways("beta", &options)
        .await
        .unwrap();
    assert_eq!(palace.link_wing_entities("beta").await.unwrap(), 3);
    let tunnels = palace.list_tunnels(None).await.unwrap();
    assert_eq!(tunnels.len(), 3, "{tunnels:?}");
}
