//! The four phases of the MemPalace design, replayed on a Palace over MemoryStore, the SQLite
//! graph and a deterministic test embedder; plus the no-palace answers and input validation.

use std::sync::Arc;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::palace::NewDrawer;
use mempalace_core::reports::{AddDrawerOutcome, Status};
use std::time::Duration;

use mempalace_core::{
    AddedBy, CandidateSource, Direction, Drawer, DrawerFilter, DrawerMetadata, Fusion, LexicalHit,
    MemoryStore, Neighbour, NewTriple, Page, Palace, PalaceError, ProcessWriteLock, RoomCount,
    SearchRequest, VectorStore, WriteGuard, WriteLock,
};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use serde_json::{Value, json};

const DIM: usize = 384;

struct TestPalace {
    palace: Arc<Palace>,
    _dir: tempfile::TempDir,
}

fn palace() -> TestPalace {
    palace_ranked_by(Fusion::default())
}

/// A test palace whose hybrid search ranks with `fusion`.
fn palace_ranked_by(fusion: Fusion) -> TestPalace {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    let palace = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(MemoryStore::new(DIM)),
        Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
    )
    .unwrap()
    .with_fusion(fusion);
    TestPalace {
        palace: Arc::new(palace),
        _dir: dir,
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

async fn file(p: &Palace, wing: &str, room: &str, content: &str, source: &str) -> String {
    let mut d = NewDrawer::new(wing, room, content);
    d.source_file = Some(source.into());
    match p.add_drawer(d).await.unwrap() {
        AddDrawerOutcome::Added(a) => a.drawer_id,
        AddDrawerOutcome::Duplicate(d) => panic!("unexpected duplicate: {d:?}"),
    }
}

#[tokio::test]
async fn no_palace_answers_and_creates_nothing() {
    let t = palace();
    let p = &t.palace;
    let status = to_json(&p.status().await.unwrap());
    assert_eq!(
        status,
        json!({
            "error": "No palace found",
            "palace_path": p.path().display().to_string(),
            "hint": "Run: mempalace init <dir> && mempalace mine <dir>"
        })
    );
    assert!(matches!(
        p.search("anything", None, None, 5).await,
        Err(PalaceError::NoPalace { .. })
    ));
    assert!(matches!(
        p.list_wings().await,
        Err(PalaceError::NoPalace { .. })
    ));
    assert!(matches!(
        p.kg_query("Clerk", None, Direction::Both).await,
        Err(PalaceError::NoPalace { .. })
    ));
    assert!(
        !p.path().exists(),
        "reads must not create the palace folder"
    );
    p.init().await.unwrap();
    assert!(matches!(p.status().await.unwrap(), Status::Ready(_)));
}

#[tokio::test]
async fn the_four_phases() {
    let t = palace();
    let p = &t.palace;
    // Files to search in.
    file(
        p,
        "wing_myproject",
        "auth",
        "We chose Clerk for authentication because Auth0 pricing grew too fast",
        "/home/u/proj/docs/auth-decision.md",
    )
    .await;
    file(
        p,
        "wing_myproject",
        "billing",
        "Stripe webhooks retry for three days before giving up",
        "/home/u/proj/docs/billing.md",
    )
    .await;
    file(
        p,
        "wing_personal",
        "family",
        "Riley plays football every Saturday morning",
        "",
    )
    .await;

    // Phase 1: status.
    let status = to_json(&p.status().await.unwrap());
    assert_eq!(status["total_drawers"], 3);
    assert_eq!(
        status["wings"],
        json!({"wing_myproject": 2, "wing_personal": 1})
    );
    assert_eq!(
        status["rooms"],
        json!({"auth": 1, "billing": 1, "family": 1})
    );
    assert_eq!(status["palace_path"], p.path().display().to_string());
    assert!(status["protocol"].as_str().unwrap().contains("ON WAKE-UP"));
    assert!(status["aaak_dialect"].as_str().unwrap().contains("AAAK"));
    assert_eq!(status.as_object().unwrap().len(), 6);

    // Phase 2: search with a wing filter.
    let found = to_json(
        &p.search(
            "why did we choose Clerk for authentication",
            Some("wing_myproject"),
            None,
            5,
        )
        .await
        .unwrap(),
    );
    assert_eq!(found["query"], "why did we choose Clerk for authentication");
    assert_eq!(
        found["filters"],
        json!({"wing": "wing_myproject", "room": null, "source_file": null, "since": null, "before": null})
    );
    assert_eq!(found["mode"], "hybrid");
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "only the wing's drawers");
    let top = &results[0];
    assert_eq!(top["wing"], "wing_myproject");
    assert_eq!(top["room"], "auth");
    assert_eq!(top["source_file"], "auth-decision.md", "file name only");
    assert!(top["text"].as_str().unwrap().starts_with("We chose Clerk"));
    let sim = top["similarity"].as_f64().unwrap();
    assert!(sim > 0.3 && sim <= 1.0);
    assert_eq!(
        (sim * 1000.0).round() / 1000.0,
        sim,
        "rounded to 3 decimals"
    );
    assert!(
        results[1]["score"].as_f64().unwrap() <= top["score"].as_f64().unwrap(),
        "best fused score first"
    );
    // The seed's five fields, plus what an agent needs to act on a hit (MemPalace 3.11's).
    let mut keys: Vec<&str> = top
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        vec![
            "bm25_score",
            "chunk_index",
            "distance",
            "drawer_id",
            "filed_at",
            "matched_via",
            "room",
            "score",
            "similarity",
            "source_file",
            "source_path",
            "text",
            "wing"
        ]
    );
    assert!(
        top["drawer_id"]
            .as_str()
            .unwrap()
            .starts_with("drawer_wing_myproject_auth_")
    );
    let room_only = p.search("football", None, Some("family"), 5).await.unwrap();
    assert_eq!(room_only.results.len(), 1);
    assert_eq!(room_only.results[0].source_file, "?");

    // Phase 3: the knowledge graph, both directions.
    let added = to_json(
        &p.kg_add(NewTriple::new("Clerk", "replaces", "Auth0").valid_from("2026-01-15"))
            .await
            .unwrap(),
    );
    assert_eq!(added["success"], true);
    assert_eq!(added["fact"], "Clerk → replaces → Auth0");
    assert!(
        added["triple_id"]
            .as_str()
            .unwrap()
            .starts_with("t_clerk_replaces_auth0_")
    );
    p.kg_add(NewTriple::new("MyProject", "uses", "Clerk"))
        .await
        .unwrap();
    let q = to_json(&p.kg_query("Clerk", None, Direction::Both).await.unwrap());
    assert_eq!(q["entity"], "Clerk");
    assert_eq!(q["as_of"], Value::Null);
    assert_eq!(q["count"], 2);
    assert_eq!(
        q["facts"][0],
        json!({"direction": "outgoing", "subject": "Clerk", "predicate": "replaces", "object": "Auth0",
               "valid_from": "2026-01-15", "valid_to": null, "confidence": 1.0, "source_closet": null, "current": true})
    );
    assert_eq!(q["facts"][1]["direction"], "incoming");
    assert_eq!(q["facts"][1]["subject"], "MyProject");
    assert_eq!(q["facts"][1]["object"], "Clerk");

    // Phase 4: the same content twice; the second is refused as a duplicate.
    let content = "Decided to move the CI runners to a 2-core machine to cut costs";
    let first = to_json(
        &p.add_drawer(NewDrawer::new("wing_myproject", "infra", content))
            .await
            .unwrap(),
    );
    assert_eq!(first["success"], true);
    let id = first["drawer_id"].as_str().unwrap();
    assert!(id.starts_with("drawer_wing_myproject_infra_"));
    assert_eq!(id.len(), "drawer_wing_myproject_infra_".len() + 16);
    assert!(
        id["drawer_wing_myproject_infra_".len()..]
            .chars()
            .all(|c| c.is_ascii_hexdigit())
    );
    let second = to_json(
        &p.add_drawer(NewDrawer::new("wing_other", "misc", content))
            .await
            .unwrap(),
    );
    assert_eq!(second["success"], false);
    assert_eq!(second["reason"], "duplicate");
    assert_eq!(second["matches"][0]["id"], id);
    assert_eq!(second["matches"][0]["similarity"], 1.0);
    assert_eq!(second["matches"][0]["wing"], "wing_myproject");
    assert_eq!(p.store().count(&DrawerFilter::all()).await.unwrap(), 4);
    let dup = p.check_duplicate(content, 0.9).await.unwrap();
    assert!(dup.is_duplicate);
    assert!(
        !p.check_duplicate("completely unrelated words about gardening tomatoes", 0.9)
            .await
            .unwrap()
            .is_duplicate
    );

    // The stored drawer carries the full metadata.
    let stored = to_json(&p.get_drawer(id).await.unwrap());
    assert_eq!(stored["added_by"], "mcp");
    assert_eq!(stored["chunk_index"], 0);
    assert_eq!(stored["source_file"], "");
    assert!(stored["filed_at"].as_str().unwrap().len() >= 19);
}

/// A `MemoryStore` that yields to the scheduler (1 ms) inside every query and upsert, as a
/// real backend's I/O does, so concurrent check-then-write sequences really interleave.
struct YieldingStore(MemoryStore);

#[async_trait::async_trait]
impl VectorStore for YieldingStore {
    fn backend_name(&self) -> &'static str {
        "yielding-memory"
    }
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    async fn exists(&self) -> mempalace_core::Result<bool> {
        self.0.exists().await
    }
    async fn create_if_missing(&self) -> mempalace_core::Result<()> {
        self.0.create_if_missing().await
    }
    async fn upsert(&self, d: &[Drawer], v: &[Vec<f32>]) -> mempalace_core::Result<()> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        self.0.upsert(d, v).await
    }
    async fn query(
        &self,
        v: &[f32],
        f: &DrawerFilter,
        limit: usize,
    ) -> mempalace_core::Result<Vec<Neighbour>> {
        let found = self.0.query(v, f, limit).await;
        tokio::time::sleep(Duration::from_millis(1)).await;
        found
    }
    async fn lexical_query(
        &self,
        text: &str,
        f: &DrawerFilter,
        limit: usize,
    ) -> mempalace_core::Result<Vec<LexicalHit>> {
        self.0.lexical_query(text, f, limit).await
    }
    async fn get(&self, ids: &[String]) -> mempalace_core::Result<Vec<Drawer>> {
        self.0.get(ids).await
    }
    async fn delete(&self, ids: &[String]) -> mempalace_core::Result<usize> {
        self.0.delete(ids).await
    }
    async fn count(&self, f: &DrawerFilter) -> mempalace_core::Result<u64> {
        self.0.count(f).await
    }
    async fn room_counts(&self, f: &DrawerFilter) -> mempalace_core::Result<Vec<RoomCount>> {
        self.0.room_counts(f).await
    }
    async fn list(&self, f: &DrawerFilter, page: Page) -> mempalace_core::Result<Vec<Drawer>> {
        self.0.list(f, page).await
    }
}

/// A lock that locks nothing: the control that shows the concurrency test can fail.
struct NoLock;

#[async_trait::async_trait]
impl WriteLock for NoLock {
    async fn acquire(&self) -> mempalace_core::Result<WriteGuard> {
        // A fresh lock per call: every caller gets its own, so nothing waits.
        ProcessWriteLock::new().acquire().await
    }
}

/// 16 tasks file the same content at once on a multi-thread runtime; returns how many were
/// added and how many drawers the store holds.
async fn file_the_same_memory_at_once(lock: Option<Arc<dyn WriteLock>>) -> (usize, u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    let mut palace = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(YieldingStore(MemoryStore::new(DIM))),
        Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
    )
    .unwrap();
    if let Some(lock) = lock {
        palace = palace.with_write_lock(lock);
    }
    palace.init().await.unwrap();
    let palace = Arc::new(palace);
    let start = Arc::new(tokio::sync::Barrier::new(16));
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (p, start) = (Arc::clone(&palace), Arc::clone(&start));
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            p.add_drawer(NewDrawer::new(
                format!("wing_{}", i % 3),
                "room",
                "the very same memory, filed by everyone at once",
            ))
            .await
            .unwrap()
        }));
    }
    let mut added = 0;
    for t in tasks {
        if t.await.unwrap().drawer_id().is_some() {
            added += 1;
        }
    }
    let stored = palace.store().count(&DrawerFilter::all()).await.unwrap();
    (added, stored)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_adds_of_the_same_content_store_it_once() {
    assert_eq!(file_the_same_memory_at_once(None).await, (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_the_write_lock_the_same_race_files_duplicates() {
    let (added, stored) = file_the_same_memory_at_once(Some(Arc::new(NoLock))).await;
    assert!(
        added > 1 && stored > 1,
        "the race must show without the lock, else the test above proves nothing: {added} added"
    );
}

#[tokio::test]
async fn absurd_limits_are_capped_at_the_palace_limit() {
    let t = palace();
    let p = &t.palace;
    let max = p.limits().max_search_results;
    let drawers: Vec<Drawer> = (0..max + 50)
        .map(|i| Drawer {
            id: format!("drawer_w_r_{i:04}"),
            text: format!("lighthouse keeper log entry {i}"),
            metadata: DrawerMetadata {
                wing: "w".into(),
                room: "r".into(),
                source_file: "log.md".into(),
                chunk_index: i as u32,
                added_by: AddedBy::Mine,
                filed_at: "2026-01-01T00:00:00".into(),
                authored_at: None,
                conversation: None,
                entities: Vec::new(),
            },
        })
        .collect();
    let vectors = p
        .embedder()
        .embed(&drawers.iter().map(|d| d.text.clone()).collect::<Vec<_>>())
        .await
        .unwrap();
    p.file_mined(&drawers, &vectors, &[]).await.unwrap();
    let hits = p.search("lighthouse", None, None, 1_000_000).await.unwrap();
    assert_eq!(hits.results.len(), max, "absurd limits are capped");
}

#[tokio::test]
async fn concurrent_adds_of_the_same_content_store_it_once_single_thread() {
    let t = palace();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let p = Arc::clone(&t.palace);
        tasks.push(tokio::spawn(async move {
            p.add_drawer(NewDrawer::new(
                format!("wing_{}", i % 3),
                "room",
                "the very same memory, filed by everyone at once",
            ))
            .await
            .unwrap()
        }));
    }
    let mut added = 0;
    for t in tasks {
        if t.await.unwrap().drawer_id().is_some() {
            added += 1;
        }
    }
    assert_eq!(added, 1);
    assert_eq!(
        t.palace.store().count(&DrawerFilter::all()).await.unwrap(),
        1
    );
}

#[tokio::test]
async fn bad_input_is_a_clear_error_and_changes_nothing() {
    let t = palace();
    let p = &t.palace;
    file(
        p,
        "wing_a",
        "room_a",
        "a first memory about lighthouses",
        "",
    )
    .await;
    let bad = [
        NewDrawer::new("wing_a", "room_a", "   \n"),
        NewDrawer::new("", "room_a", "content"),
        NewDrawer::new("wing_a", "a/b", "content"),
        NewDrawer::new("wing\u{0}", "room", "content"),
    ];
    for d in bad {
        assert!(
            matches!(
                p.add_drawer(d.clone()).await,
                Err(PalaceError::InvalidInput { .. })
            ),
            "{d:?}"
        );
    }
    assert!(matches!(
        p.search("x", None, None, 0).await,
        Err(PalaceError::InvalidInput { field: "limit", .. })
    ));
    assert!(matches!(
        p.search("  ", None, None, 5).await,
        Err(PalaceError::InvalidInput { field: "query", .. })
    ));
    for (field, outcome) in [
        (
            "source_file",
            p.add_drawer(NewDrawer {
                source_file: Some("x".repeat(5000)),
                ..NewDrawer::new("wing_a", "room_a", "a memory with a huge source")
            })
            .await
            .map(|_| ()),
        ),
        (
            "query",
            p.search(&"lighthouse ".repeat(2000), None, None, 5)
                .await
                .map(|_| ()),
        ),
        (
            "offset",
            p.list_drawers(
                None,
                None,
                Page {
                    offset: 10_000_000,
                    limit: 5,
                },
            )
            .await
            .map(|_| ()),
        ),
        (
            "offset",
            p.kg_timeline(
                None,
                Page {
                    offset: 10_000_000,
                    limit: 5,
                },
            )
            .await
            .map(|_| ()),
        ),
    ] {
        match outcome {
            Err(PalaceError::InvalidInput { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: expected a bound error, got {other:?}"),
        }
    }
    assert!(matches!(
        p.check_duplicate("x", 1.5).await,
        Err(PalaceError::InvalidInput {
            field: "threshold",
            ..
        })
    ));
    match p.search("lighthouses", Some("wing_typo"), None, 5).await {
        Err(PalaceError::UnknownWing { wing, known }) => {
            assert_eq!(wing, "wing_typo");
            assert_eq!(known, vec!["wing_a"]);
        }
        other => panic!("expected unknown wing, got {other:?}"),
    }
    assert!(matches!(
        p.list_rooms(Some("nope")).await,
        Err(PalaceError::UnknownWing { .. })
    ));
    assert!(matches!(
        p.delete_drawer("drawer_missing").await,
        Err(PalaceError::DrawerNotFound(_))
    ));
    assert!(
        p.kg_add(NewTriple::new("a", "b", "c").source_closet("drawer_missing"))
            .await
            .is_err(),
        "source_closet must exist"
    );
    assert_eq!(p.kg_stats().await.unwrap().triples, 0);
    assert_eq!(p.store().count(&DrawerFilter::all()).await.unwrap(), 1);
}

#[tokio::test]
async fn listing_taxonomy_delete_and_diary() {
    let t = palace();
    let p = &t.palace;
    let a = file(
        p,
        "wing_a",
        "r1",
        "alpha memory about sailing boats",
        "/x/a.md",
    )
    .await;
    file(
        p,
        "wing_a",
        "r2",
        "beta memory about mountain climbing",
        "/x/b.md",
    )
    .await;
    file(
        p,
        "wing_b",
        "r1",
        "gamma memory about baking bread",
        "/x/c.md",
    )
    .await;
    let tax = to_json(&p.taxonomy().await.unwrap());
    assert_eq!(
        tax,
        json!({"taxonomy": {"wing_a": {"r1": 1, "r2": 1}, "wing_b": {"r1": 1}}})
    );
    assert_eq!(
        to_json(&p.list_wings().await.unwrap()),
        json!({"wings": {"wing_a": 2, "wing_b": 1}})
    );
    assert_eq!(
        to_json(&p.list_rooms(Some("wing_a")).await.unwrap()),
        json!({"wing": "wing_a", "rooms": {"r1": 1, "r2": 1}})
    );
    assert_eq!(
        to_json(&p.list_rooms(None).await.unwrap())["rooms"],
        json!({"r1": 2, "r2": 1})
    );
    let listing = p
        .list_drawers(
            Some("wing_a"),
            None,
            Page {
                offset: 0,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_eq!((listing.count, listing.limit), (1, 1));
    let listing2 = p
        .list_drawers(
            Some("wing_a"),
            None,
            Page {
                offset: 1,
                limit: 1,
            },
        )
        .await
        .unwrap();
    assert_ne!(listing.drawers[0].drawer_id, listing2.drawers[0].drawer_id);
    assert_eq!(
        to_json(&p.delete_drawer(&a).await.unwrap()),
        json!({"success": true, "drawer_id": a, "deleted_ids": [a], "chunks_deleted": 0})
    );
    assert!(matches!(
        p.get_drawer(&a).await,
        Err(PalaceError::DrawerNotFound(_))
    ));

    p.diary_write(
        "Claude Code",
        "Refactored the auth module today",
        Some("auth"),
        None,
    )
    .await
    .unwrap();
    p.diary_write("Claude Code", "Wrote the billing tests", None, None)
        .await
        .unwrap();
    let diary = to_json(&p.diary_read("Claude Code", 1, None).await.unwrap());
    assert_eq!(diary["agent"], "Claude Code");
    assert_eq!(diary["total"], 2);
    assert_eq!(diary["showing"], 1);
    assert_eq!(diary["entries"][0]["content"], "Wrote the billing tests");
    assert_eq!(diary["entries"][0]["topic"], "general");
    assert_eq!(
        p.list_rooms(Some("wing_claude_code"))
            .await
            .unwrap()
            .rooms
            .get("diary"),
        Some(&2)
    );
}

#[tokio::test]
async fn long_content_is_filed_in_chunks_and_read_searched_and_deleted_whole() {
    let t = palace();
    let p = &t.palace;
    let head = "Meeting notes on the lighthouse restoration budget. ".repeat(16); // 832 chars
    let middle = "The keeper reported rust on the lantern gallery railings. ".repeat(14);
    let tail = "Finally the zeppelin hangar quartermaster signed the invoice.";
    let content = format!("{head}{middle}{tail}");
    let n = content.chars().count();
    let added = match p
        .add_drawer(NewDrawer::new("wing_notes", "budget", content.clone()))
        .await
        .unwrap()
    {
        AddDrawerOutcome::Added(a) => a,
        AddDrawerOutcome::Duplicate(d) => panic!("unexpected duplicate: {d:?}"),
    };
    assert_eq!(added.chunks, n.div_ceil(800));
    assert_eq!(added.chunk_ids.len(), added.chunks);
    assert_eq!(
        added.chunk_ids[1],
        format!("{}_chunk_000001", added.drawer_id)
    );
    assert_eq!(
        to_json(&p.status().await.unwrap())["total_drawers"],
        json!(added.chunks)
    );
    // Read back whole, under the id add_drawer returned.
    let view = to_json(&p.get_drawer(&added.drawer_id).await.unwrap());
    assert_eq!(view["content"], json!(content), "{view}");
    assert_eq!(view["drawer_id"], json!(added.drawer_id));
    // Words only the last chunk holds find the drawer, once, under its own id.
    let found = p
        .search("zeppelin hangar quartermaster invoice", None, None, 10)
        .await
        .unwrap();
    let ids: Vec<&str> = found.results.iter().map(|h| h.drawer_id.as_str()).collect();
    assert_eq!(ids.first(), Some(&added.drawer_id.as_str()), "{ids:?}");
    assert_eq!(
        ids.iter().filter(|i| **i == added.drawer_id).count(),
        1,
        "one hit per drawer: {ids:?}"
    );
    // The same content again is a duplicate.
    assert!(matches!(
        p.add_drawer(NewDrawer::new("wing_notes", "budget", content.clone()))
            .await
            .unwrap(),
        AddDrawerOutcome::Duplicate(_)
    ));
    // Deleting the drawer deletes every chunk.
    p.delete_drawer(&added.drawer_id).await.unwrap();
    assert!(matches!(
        p.get_drawer(&added.drawer_id).await,
        Err(PalaceError::DrawerNotFound(_))
    ));
    assert_eq!(
        to_json(&p.status().await.unwrap())["total_drawers"],
        json!(0)
    );
}

/// kg_query answers 3.11's payload: facts grouped into active / historical / future (now,
/// without as_of), the name a query resolved to, and candidates when nothing matched.
#[tokio::test]
async fn kg_query_groups_facts_and_resolves_names_as_3_11() {
    let t = palace();
    let p = &t.palace;
    p.kg_add(
        NewTriple::new("Alice Smith", "worked_at", "Initech")
            .valid_from("2019-01-01")
            .valid_to("2020-12-31"),
    )
    .await
    .unwrap();
    p.kg_add(NewTriple::new("Alice Smith", "works_at", "Acme").valid_from("2021-01-01"))
        .await
        .unwrap();
    p.kg_add(NewTriple::new("Alice Smith", "will_join", "Globex").valid_from("2999-01-01"))
        .await
        .unwrap();
    let q = to_json(
        &p.kg_query("Alice Smith", None, Direction::Both)
            .await
            .unwrap(),
    );
    let objects = |key: &str| -> Vec<String> {
        q[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["object"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(objects("active_facts"), vec!["Acme"]);
    assert_eq!(objects("historical_facts"), vec!["Initech"]);
    assert_eq!(objects("future_facts"), vec!["Globex"]);
    assert_eq!(q["count"], 3);
    assert_eq!(objects("facts").len(), 3);
    assert!(q.get("resolved_from").is_none() && q.get("candidates").is_none());

    // With as_of every matching fact is active.
    let at = to_json(
        &p.kg_query("Alice Smith", Some("2020-06-01"), Direction::Both)
            .await
            .unwrap(),
    );
    assert_eq!(at["active_facts"].as_array().unwrap().len(), 1);
    assert_eq!(at["historical_facts"], json!([]));
    assert_eq!(at["as_of"], "2020-06-01");

    // "Alice" is no entity, but one entity's name holds it as a word.
    let r = to_json(&p.kg_query("Alice", None, Direction::Both).await.unwrap());
    assert_eq!(r["entity"], "Alice Smith");
    assert_eq!(r["resolved_from"], "Alice");
    assert_eq!(r["count"], 3);

    p.kg_add(NewTriple::new("Alice Jones", "likes", "tea"))
        .await
        .unwrap();
    let none = to_json(&p.kg_query("Alice", None, Direction::Both).await.unwrap());
    assert_eq!(none["count"], 0);
    assert_eq!(none["entity"], "Alice");
    assert_eq!(none["candidates"].as_array().unwrap().len(), 2);
    assert!(matches!(
        p.kg_query("Alice", Some("2025"), Direction::Both).await,
        Err(PalaceError::InvalidInput { field: "as_of", .. })
    ));
}

/// kg_add keeps 3.11's provenance columns apart (source_closet, source_file,
/// source_drawer_id), and a drawer id must name a drawer, one filed in chunks included.
#[tokio::test]
async fn kg_add_provenance_names_existing_drawers() {
    let t = palace();
    let p = &t.palace;
    let long = "The deploy pipeline now signs every artifact with cosign. ".repeat(40);
    let drawer = file(p, "wing_ops", "deploys", &long, "notes.md").await;
    let mut triple = NewTriple::new("pipeline", "signs_with", "cosign");
    triple.source_drawer_id = Some(drawer.clone());
    triple.source_file = Some("notes.md".into());
    p.kg_add(triple).await.unwrap();
    let mut missing = NewTriple::new("pipeline", "signs_with", "gpg");
    missing.source_drawer_id = Some("drawer_nowhere".into());
    assert!(matches!(
        p.kg_add(missing).await,
        Err(PalaceError::InvalidInput {
            field: "source_drawer_id",
            ..
        })
    ));
    let conn =
        rusqlite::Connection::open(t._dir.path().join("palace/knowledge_graph.sqlite3")).unwrap();
    let (closet, source_file, drawer_id): (Option<String>, Option<String>, Option<String>) = conn
        .query_row(
            "SELECT source_closet, source_file, source_drawer_id FROM triples",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(closet, None);
    assert_eq!(source_file.as_deref(), Some("notes.md"));
    assert_eq!(drawer_id.as_deref(), Some(drawer.as_str()));
}

#[tokio::test]
async fn vector_candidates_are_ranked_without_the_lexical_channel() {
    let t = palace();
    let p = &t.palace;
    for (room, text) in [
        (
            "deploy",
            "The pipeline signs every artifact with cosign before release.",
        ),
        (
            "billing",
            "Stripe webhooks are retried for three days before we alert.",
        ),
        ("garden", "Tomatoes need staking by the middle of June."),
    ] {
        file(p, "w", room, text, &format!("{room}.md")).await;
    }
    let query = "when are stripe webhooks retried";
    let union = p.search_with(&SearchRequest::new(query)).await.unwrap();
    assert!(
        union
            .results
            .iter()
            .any(|h| h.matched_via.contains("lexical")),
        "the union takes the lexical channel's finds: {:?}",
        union.results
    );
    let vector_only = p
        .search_with(&SearchRequest::new(query).candidates(CandidateSource::Vector))
        .await
        .unwrap();
    assert_eq!(vector_only.results.len(), union.results.len());
    assert!(
        vector_only
            .results
            .iter()
            .all(|h| h.matched_via == "vector"),
        "{:?}",
        vector_only.results
    );
    // Still re-ranked by the words: the billing drawer carries a BM25 score.
    let billing = vector_only
        .results
        .iter()
        .find(|h| h.room == "billing")
        .unwrap();
    assert!(billing.bm25_score > 0.0);

    // The palace's own setting, as `Fusion::mempalace_3_11` sets it.
    let t311 = palace_ranked_by(Fusion::mempalace_3_11());
    let p311 = &t311.palace;
    file(
        p311,
        "w",
        "billing",
        "Stripe webhooks are retried for three days.",
        "b.md",
    )
    .await;
    let hits = p311.search_with(&SearchRequest::new(query)).await.unwrap();
    assert!(hits.results.iter().all(|h| h.matched_via == "vector"));
    let hits = p311
        .search_with(&SearchRequest::new(query).candidates(CandidateSource::Union))
        .await
        .unwrap();
    assert!(
        hits.results
            .iter()
            .any(|h| h.matched_via.contains("lexical"))
    );
}

/// A fact invalidated today without an end date, as MemPalace 3.11 answers it (its
/// `tool_kg_query` on the same calls): still among `active_facts`, with `current: false`,
/// until the day is over (a date-only `valid_to` ends at 23:59:59 UTC); counted as expired
/// by `kg_stats`; found by `as_of` today, not by `as_of` tomorrow.
#[tokio::test]
async fn a_fact_invalidated_today_is_active_until_the_day_ends_as_in_3_11() {
    let t = palace();
    let p = &t.palace;
    p.kg_add(NewTriple::new("Alice", "works_at", "Acme").valid_from("2026-01-01"))
        .await
        .unwrap();
    p.kg_invalidate("Alice", "works_at", "Acme", None)
        .await
        .unwrap();
    // Local date, as 3.11's `date.today()`; compare with the end of the UTC day as 3.11 does.
    let today = chrono::Local::now().date_naive().to_string();
    let now_utc = chrono::Utc::now().date_naive().to_string();
    let r = to_json(&p.kg_query("Alice", None, Direction::Both).await.unwrap());
    assert_eq!(r["facts"][0]["valid_to"], today.as_str(), "{r}");
    assert_eq!(r["facts"][0]["current"], false, "{r}");
    if today >= now_utc {
        assert_eq!(r["active_facts"].as_array().unwrap().len(), 1, "{r}");
        assert_eq!(r["historical_facts"], json!([]), "{r}");
    }
    let as_of_today = to_json(
        &p.kg_query("Alice", Some(&today), Direction::Both)
            .await
            .unwrap(),
    );
    assert_eq!(as_of_today["count"], 1, "{as_of_today}");
    let tomorrow = (chrono::Local::now().date_naive() + chrono::Days::new(1)).to_string();
    let as_of_tomorrow = to_json(
        &p.kg_query("Alice", Some(&tomorrow), Direction::Both)
            .await
            .unwrap(),
    );
    assert_eq!(as_of_tomorrow["count"], 0, "{as_of_tomorrow}");
    let stats = to_json(&p.kg_stats().await.unwrap());
    assert_eq!(stats["current_facts"], 0, "{stats}");
    assert_eq!(stats["expired_facts"], 1, "{stats}");
}
