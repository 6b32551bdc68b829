//! A palace whose graph is in PostgreSQL keeps its coordination log, tunnels and closets
//! there too, shared by every host; a host that still has them in its folder (a fleet palace
//! from before they were shared) has them moved in on open, nothing lost or doubled, and goes
//! on appending. Needs `MEMPALACE_TEST_POSTGRES_URL` (SKIPPED without it).
#![cfg(feature = "postgres")]

use std::path::Path;
use std::sync::Arc;

use mempalace::core::Embedder;
use mempalace::core::closets::{Closet, ClosetIndex};
use mempalace::core::coordination::{
    Coordination, CoordinationLog, EventQuery, NewArtifact, NewEvent,
};
use mempalace::core::palace_links::{NewTunnel, PalaceLinks};
use mempalace::core::{MemoryStore, NewDrawer, Palace};
use mempalace::{BackendKind, KgBackend, PalaceBuilder, PalaceConfig};
use mempalace_closets_sqlite::SqliteClosets;
use mempalace_conformance::hashing_embedder::HashingEmbedder;
use mempalace_conformance::live_service::postgres_url;
use mempalace_coord_sqlite::SqliteCoordinationLog;
use mempalace_links_json::JsonFileLinks;

const DIMENSION: usize = 64;

fn tunnel(target_room: &str) -> NewTunnel {
    NewTunnel {
        source_wing: "wing_code".into(),
        source_room: "decisions".into(),
        target_wing: "wing_ops".into(),
        target_room: target_room.into(),
        label: format!("to {target_room}"),
        source_drawer_id: None,
        target_drawer_id: None,
        kind: "explicit".into(),
    }
}

/// Writes a host's own sidecar files the way a fleet host did before they were shared.
async fn old_host_files(host: &Path, agent: &str, room: &str) {
    let log: Arc<dyn CoordinationLog> = Arc::new(SqliteCoordinationLog::in_palace(host));
    let coordination = Coordination::new(Arc::clone(&log));
    let artifact = coordination
        .artifact_put(&NewArtifact {
            kind: "note".into(),
            content: format!("notes of {agent}"),
            created_by: agent.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .artifact;
    for n in 0..3 {
        let mut event = NewEvent::new("status.update", "fleet", "status", agent);
        event.body = Some(format!("{agent} {n}"));
        if n == 0 {
            event.artifact_ids = Some(vec![artifact.id.clone()]);
        }
        coordination.event_append(&event).await.unwrap();
    }
    JsonFileLinks::new(host)
        .upsert_tunnel(tunnel(room))
        .await
        .unwrap();
    SqliteClosets::in_palace(host)
        .upsert(&[Closet {
            id: format!("closet_{agent}"),
            text: format!("{agent} notes|deploys"),
            wing: "wing_ops".into(),
            room: room.into(),
            source_file: format!("/{agent}.md"),
        }])
        .await
        .unwrap();
}

/// A host of the fleet: the folder, a store shared by the test's hosts, the shared graph.
async fn host(folder: &Path, store: &Arc<MemoryStore>, pg: &str) -> Palace {
    PalaceBuilder::new(folder)
        .embedder(Arc::new(HashingEmbedder::new(DIMENSION)))
        .store(store.clone())
        .knowledge_graph_postgres(pg)
        .open_or_create()
        .await
        .expect("the host opens")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_share_the_log_links_and_closets_and_old_files_move_in() {
    let Some(pg) = postgres_url("hosts_share_the_log_links_and_closets_and_old_files_move_in")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (folder_a, folder_b) = (dir.path().join("host_a"), dir.path().join("host_b"));
    old_host_files(&folder_a, "agent-a", "deploys").await;
    old_host_files(&folder_b, "agent-b", "alerts").await;
    // Both hosts' folders record the same palace (its id names the schema), as a fleet's
    // copied palace.json does; the drawers are in one store the test shares between them.
    let palace_id = format!(
        "fleet-sidecars-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let embedder = HashingEmbedder::new(DIMENSION);
    let mut record = PalaceConfig::new(BackendKind::Lancedb, embedder.model_name(), DIMENSION);
    record.palace_id = Some(palace_id.clone());
    record.knowledge_graph = KgBackend::Postgres;
    record.kg_schema = Some(
        mempalace::kg_postgres::SchemaName::for_palace(&palace_id)
            .unwrap()
            .as_str()
            .to_string(),
    );
    for folder in [&folder_a, &folder_b] {
        record.save(folder).unwrap();
    }
    let store = Arc::new(MemoryStore::new(DIMENSION));
    let a = host(&folder_a, &store, &pg).await;
    let b = host(&folder_b, &store, &pg).await;
    // Both hosts' old records are in the shared log, once each, artifacts linked.
    let everything = EventQuery {
        order: Some("asc".into()),
        limit: Some(100),
        ..EventQuery::default()
    };
    let seen_a = a.event_list(&everything).await.unwrap().events;
    let seen_b = b.event_list(&everything).await.unwrap().events;
    assert_eq!(seen_a, seen_b, "one log, seen alike from both hosts");
    let mut bodies: Vec<&str> = seen_a.iter().map(|e| e.body.as_str()).collect();
    bodies.sort();
    assert_eq!(
        bodies,
        [
            "agent-a 0",
            "agent-a 1",
            "agent-a 2",
            "agent-b 0",
            "agent-b 1",
            "agent-b 2"
        ]
    );
    assert!(seen_a.iter().filter(|e| !e.artifact_ids.is_empty()).count() == 2);
    // Tunnels and closets from both.
    assert_eq!(a.list_tunnels(None).await.unwrap().len(), 2);
    assert_eq!(b.closet_count().await.unwrap(), 2);
    // The files were set aside, so a reopen copies nothing again.
    for folder in [&folder_a, &folder_b] {
        assert!(!folder.join("logstream.sqlite3").exists());
        assert!(folder.join("logstream.sqlite3.moved-to-postgres").exists());
        assert!(!folder.join("tunnels.json").exists());
        assert!(!folder.join("closets.sqlite3").exists());
    }
    let again = host(&folder_a, &store, &pg).await;
    assert_eq!(again.event_list(&everything).await.unwrap().events.len(), 6);
    // Each host goes on appending after its own earlier events (its author sequence
    // continues), and each sees the other's at once.
    let mut next = NewEvent::new("status.update", "fleet", "status", "agent-a");
    next.body = Some("agent-a 3".into());
    let written = a.event_append(&next).await.unwrap().event;
    let before = seen_a
        .iter()
        .filter(|e| e.origin_replica == written.origin_replica)
        .filter_map(|e| e.origin_seq)
        .max()
        .unwrap();
    assert_eq!(written.origin_seq, Some(before + 1));
    let from_b = b
        .event_list(&EventQuery {
            writer: Some("agent-a".into()),
            ..EventQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(from_b.count, 4);
    for (wing, room, text) in [
        (
            "wing_code",
            "decisions",
            "We chose PostgreSQL for the fleet.",
        ),
        (
            "wing_ops",
            "pager",
            "The pager rotation changes every Monday.",
        ),
    ] {
        b.add_drawer(NewDrawer::new(wing, room, text))
            .await
            .unwrap();
    }
    b.create_tunnel(tunnel("pager")).await.unwrap();
    assert_eq!(a.list_tunnels(None).await.unwrap().len(), 3);
}
