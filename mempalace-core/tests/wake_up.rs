//! Wake-up (L0 + L1) on a small fixture palace: which drawers L1 picks, the token budget
//! counted by the embedder's tokenizer, the identity file, the wing filter.

use std::sync::Arc;

use async_trait::async_trait;
use mempalace_conformance::HashingEmbedder;
use mempalace_core::wake_up::WakeUpRequest;
use mempalace_core::{
    AddedBy, Drawer, DrawerMetadata, Embedder, MemoryStore, Palace, Result, VectorStore,
};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

const DIM: usize = 32;

/// The hashing embedder with a tokenizer: one token per whitespace-separated word.
struct WordTokens(HashingEmbedder);

#[async_trait]
impl Embedder for WordTokens {
    fn model_name(&self) -> &str {
        "words"
    }
    fn dimension(&self) -> usize {
        self.0.dimension()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.0.embed(texts).await
    }
    async fn count_tokens(&self, texts: &[String]) -> Result<Option<Vec<usize>>> {
        Ok(Some(
            texts.iter().map(|t| t.split_whitespace().count()).collect(),
        ))
    }
}

fn drawer(id: &str, wing: &str, room: &str, text: &str, filed_at: &str) -> Drawer {
    Drawer {
        id: id.into(),
        text: text.into(),
        metadata: DrawerMetadata {
            wing: wing.into(),
            room: room.into(),
            source_file: format!("/notes/{room}.md"),
            chunk_index: 0,
            added_by: AddedBy::Mine,
            filed_at: filed_at.into(),
            authored_at: None,
            conversation: None,
            entities: Vec::new(),
        },
    }
}

/// 20 new drawers in one busy room, 2 older in a second room, 1 oldest in another wing,
/// and a drawer repeating a busy-room text.
async fn fixture(dir: &std::path::Path) -> Palace {
    let store = Arc::new(MemoryStore::new(DIM));
    let mut drawers = Vec::new();
    for i in 0..20 {
        drawers.push(drawer(
            &format!("busy{i:02}"),
            "wing_app",
            "standups",
            &format!("Standup {i}: the team reviewed ticket {i} and moved on."),
            &format!("2026-06-{:02}T09:00:00", 10 + i),
        ));
    }
    drawers.push(drawer(
        "dup",
        "wing_app",
        "copies",
        "Standup 19: the team reviewed ticket 19 and moved on.",
        "2026-06-29T10:00:00",
    ));
    drawers.push(drawer(
        "dec1",
        "wing_app",
        "decisions",
        "We chose Postgres over MySQL for the billing service.",
        "2026-05-01T09:00:00",
    ));
    drawers.push(drawer(
        "dec2",
        "wing_app",
        "decisions",
        "Deploys happen on Tuesdays after the freeze.",
        "2026-05-02T09:00:00",
    ));
    drawers.push(drawer(
        "fam1",
        "wing_family",
        "school",
        "Riley starts Year 7 in September.",
        "2026-01-01T09:00:00",
    ));
    let vectors = HashingEmbedder::new(DIM)
        .embed(&drawers.iter().map(|d| d.text.clone()).collect::<Vec<_>>())
        .await
        .unwrap();
    store.create_if_missing().await.unwrap();
    store.upsert(&drawers, &vectors).await.unwrap();
    Palace::new(
        dir.join("palace"),
        Arc::new(WordTokens(HashingEmbedder::new(DIM))),
        store,
        Arc::new(SqliteKnowledgeGraph::in_memory()),
    )
    .unwrap()
}

#[tokio::test]
async fn essential_story_gives_every_room_a_turn_and_skips_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path()).await;
    let woken = p
        .wake_up(&WakeUpRequest {
            l1_tokens: 10_000,
            ..WakeUpRequest::default()
        })
        .await
        .unwrap();
    // 15 drawers; each room's newest come first (3.11 would show only the 15 newest, all
    // from the busy room); Standup 19's text is shown once, from its newer copy.
    assert_eq!(woken.drawer_ids.len(), 15, "{:?}", woken.drawer_ids);
    assert!(!woken.drawer_ids.contains(&"busy19".to_string()));
    for id in ["dup", "busy18", "dec2", "dec1", "fam1"] {
        assert!(
            woken.drawer_ids.contains(&id.to_string()),
            "{id} in {:?}",
            woken.drawer_ids
        );
    }
    assert_eq!(
        woken.essential.text.matches("Standup 19:").count(),
        1,
        "{}",
        woken.essential.text
    );
    // Grouped by room, in name order, with the file shown.
    let text = &woken.essential.text;
    let (d, s) = (
        text.find("[decisions]").unwrap(),
        text.find("[standups]").unwrap(),
    );
    assert!(
        text.starts_with("## L1 — ESSENTIAL STORY") && d < s,
        "{text}"
    );
    assert!(text.contains("(decisions.md)"), "{text}");
    assert_eq!(woken.token_counter, "words tokenizer");
    assert_eq!(woken.tokens, woken.text.split_whitespace().count());
}

#[tokio::test]
async fn the_budget_is_kept_by_the_tokenizer_count() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path()).await;
    for budget in [20, 45, 90] {
        let woken = p
            .wake_up(&WakeUpRequest {
                l1_tokens: budget,
                ..WakeUpRequest::default()
            })
            .await
            .unwrap();
        assert!(woken.essential.tokens <= budget, "{budget}: {woken:?}");
        assert_eq!(
            woken.essential.tokens,
            woken.essential.text.split_whitespace().count()
        );
        assert!(woken.drawer_ids.len() < 15);
        assert!(woken.essential.text.ends_with("... (more in L3 search)"));
    }
}

#[tokio::test]
async fn identity_and_wing() {
    let dir = tempfile::tempdir().unwrap();
    let p = fixture(dir.path()).await;
    std::fs::create_dir_all(dir.path().join("palace")).unwrap();
    std::fs::write(
        dir.path().join("palace/identity.txt"),
        "I am Atlas, the assistant of the app team.\n",
    )
    .unwrap();
    let woken = p
        .wake_up(&WakeUpRequest {
            wing: Some("wing_family".into()),
            ..WakeUpRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(
        woken.identity.text,
        "I am Atlas, the assistant of the app team."
    );
    assert!(woken.identity_source.ends_with("identity.txt"));
    assert_eq!(woken.drawer_ids, vec!["fam1".to_string()]);
    assert!(woken.text.starts_with("I am Atlas"), "{}", woken.text);
    assert!(
        p.wake_up(&WakeUpRequest {
            wing: Some(" ".into()),
            ..WakeUpRequest::default()
        })
        .await
        .is_err()
    );
}

#[tokio::test]
async fn a_missing_palace_wakes_up_saying_so_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none");
    let p = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(MemoryStore::new(DIM)),
        Arc::new(SqliteKnowledgeGraph::in_memory()),
    )
    .unwrap();
    let woken = p
        .wake_up(&WakeUpRequest {
            identity_path: Some(dir.path().join("missing.txt")),
            ..WakeUpRequest::default()
        })
        .await
        .unwrap();
    // The words every read of a missing palace uses.
    assert!(
        woken
            .essential
            .text
            .starts_with("## L1 — No palace found at "),
        "{}",
        woken.essential.text
    );
    assert!(woken.drawer_ids.is_empty());
    assert_eq!(woken.identity_source, "default");
    assert!(woken.token_counter.starts_with("estimate"));
    assert!(!path.exists());
}

/// One `mine` files every drawer with the same `filed_at`: the newest candidates are then
/// whichever room's ids sort first. Every room must still take its turn.
#[tokio::test]
async fn rooms_take_turns_when_one_mine_filed_everything_at_one_moment() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::new(DIM));
    let moment = "2026-06-10T09:00:00";
    let mut drawers = Vec::new();
    // "aaa" sorts first and holds more drawers than L1 looks at in one go.
    for (room, n) in [
        ("aaa", 300),
        ("bbb", 12),
        ("ccc", 12),
        ("ddd", 12),
        ("eee", 12),
    ] {
        for i in 0..n {
            drawers.push(drawer(
                &format!("drawer_wing_lib_{room}_{i:04}"),
                "wing_lib",
                room,
                &format!("Module {room} part {i} explains one function of the library."),
                moment,
            ));
        }
    }
    // An older mine of another wing.
    drawers.push(drawer(
        "drawer_wing_old_notes_0001",
        "wing_old",
        "notes",
        "The sample project switched authentication provider in January.",
        "2026-01-01T09:00:00",
    ));
    let vectors = HashingEmbedder::new(DIM)
        .embed(&drawers.iter().map(|d| d.text.clone()).collect::<Vec<_>>())
        .await
        .unwrap();
    store.create_if_missing().await.unwrap();
    store.upsert(&drawers, &vectors).await.unwrap();
    let p = Palace::new(
        dir.path().join("palace"),
        Arc::new(WordTokens(HashingEmbedder::new(DIM))),
        store,
        Arc::new(SqliteKnowledgeGraph::in_memory()),
    )
    .unwrap();
    let woken = p
        .wake_up(&WakeUpRequest {
            l1_tokens: 10_000,
            ..WakeUpRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(woken.drawer_ids.len(), 15, "{:?}", woken.drawer_ids);
    // The five rooms of the newest moment take turns, 3 each; the older wing's room, which
    // the newest moment does not reach, stays out (as it would without the tie).
    for room in ["aaa", "bbb", "ccc", "ddd", "eee"] {
        let shown = woken
            .drawer_ids
            .iter()
            .filter(|id| id.contains(&format!("_{room}_")))
            .count();
        assert_eq!(shown, 3, "room {room}: {:?}", woken.drawer_ids);
    }
    // Within one wing, only that wing's rooms.
    let woken = p
        .wake_up(&WakeUpRequest {
            wing: Some("wing_old".into()),
            l1_tokens: 10_000,
            ..WakeUpRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(woken.drawer_ids, ["drawer_wing_old_notes_0001"]);
}
