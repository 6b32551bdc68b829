//! Closets in search: MemPalace 3.11's ranking lifts the drawers of files whose closet holds
//! the query's words and shows their best passage once; the default ranking ignores closets;
//! re-mining or deleting a file drops its closets.

use std::sync::Arc;

use mempalace_conformance::HashingEmbedder;
use mempalace_core::closets::{Closet, ClosetIndex, ClosetScope, MemoryClosets};
use mempalace_core::{
    AddedBy, Drawer, DrawerMetadata, Fusion, MemoryStore, Palace, PalaceError, SearchRequest,
};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;

const DIM: usize = 384;
const GARDEN: &str = "/notes/garden.md";
const TRAVEL: &str = "/notes/travel.md";
const GARDEN_CHUNKS: [&str; 4] = [
    "Garden plan for the spring beds.",
    "Tomatoes need staking by the middle of June.",
    "Tomatoes want the compost turned every two weeks.",
    "Basil bolts as soon as the nights get warm.",
];

fn chunk(source: &str, room: &str, index: u32, text: &str) -> Drawer {
    Drawer {
        id: format!("drawer_wing_home_{room}_{index:04}"),
        text: text.into(),
        metadata: DrawerMetadata {
            wing: "wing_home".into(),
            room: room.into(),
            source_file: source.into(),
            chunk_index: index,
            added_by: AddedBy::Mine,
            filed_at: "2026-01-01T00:00:00".into(),
            authored_at: None,
            conversation: None,
            entities: Vec::new(),
        },
    }
}

fn garden_closet() -> Closet {
    Closet {
        id: "closet_wing_home_garden_0001_01".into(),
        text: "garden notes|Tomatoes;Compost;Basil|2026-01-01:L1-L4|→drawer_wing_home_garden_0000"
            .into(),
        wing: "wing_home".into(),
        room: "garden".into(),
        source_file: GARDEN.into(),
    }
}

struct Setup {
    palace: Palace,
    _dir: tempfile::TempDir,
}

async fn palace_with_closets(fusion: Fusion) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace");
    let palace = Palace::new(
        &path,
        Arc::new(HashingEmbedder::new(DIM)),
        Arc::new(MemoryStore::new(DIM)),
        Arc::new(SqliteKnowledgeGraph::in_palace(&path)),
    )
    .unwrap()
    .with_closets(Arc::new(MemoryClosets::new()))
    .with_fusion(fusion);
    let mut drawers: Vec<Drawer> = GARDEN_CHUNKS
        .iter()
        .enumerate()
        .map(|(i, t)| chunk(GARDEN, "garden", i as u32, t))
        .collect();
    drawers.push(chunk(TRAVEL, "travel", 0, "The night train leaves at ten."));
    drawers.push(chunk(
        TRAVEL,
        "travel",
        1,
        "Tomatoes from the market travel badly on the train.",
    ));
    palace.import_drawers(&drawers).await.unwrap();
    assert_eq!(palace.import_closets(&[garden_closet()]).await.unwrap(), 1);
    Setup { palace, _dir: dir }
}

#[tokio::test]
async fn the_3_11_ranking_lifts_a_closet_file_and_shows_its_best_passage_once() {
    let s = palace_with_closets(Fusion::mempalace_3_11()).await;
    let r = s
        .palace
        .search_with(&SearchRequest::new("when do tomatoes need staking").limit(3))
        .await
        .unwrap();
    let garden: Vec<_> = r
        .results
        .iter()
        .filter(|h| h.source_path == GARDEN)
        .collect();
    assert_eq!(
        garden.len(),
        1,
        "the file's passage is shown once: {:#?}",
        r.results
    );
    let hit = garden[0];
    assert_eq!(hit.closet_boost, 0.40);
    assert!(hit.matched_via.ends_with("+closet"), "{}", hit.matched_via);
    assert_eq!(hit.text, GARDEN_CHUNKS[..3].join("\n\n"));
    assert!(
        hit.also_in.is_empty(),
        "the file's other chunks showed the same passage and are dropped, not listed: {:?}",
        hit.also_in
    );
    assert!(
        hit.closet_preview
            .as_deref()
            .unwrap()
            .starts_with("garden notes|")
    );
    for other in r.results.iter().filter(|h| h.source_path != GARDEN) {
        assert_eq!(other.closet_boost, 0.0);
        assert!(!other.matched_via.contains("closet"));
        assert!(other.closet_preview.is_none());
    }

    // A search in another room cannot use the garden's closet.
    let r = s
        .palace
        .search_with(
            &SearchRequest::new("when do tomatoes need staking")
                .room("travel")
                .limit(3),
        )
        .await
        .unwrap();
    assert!(r.results.iter().all(|h| h.closet_boost == 0.0));
    // Nor does a query with no word of three letters or more in a closet.
    let r = s
        .palace
        .search_with(&SearchRequest::new("night train").limit(3))
        .await
        .unwrap();
    assert!(r.results.iter().all(|h| h.closet_boost == 0.0));
}

#[tokio::test]
async fn the_default_ranking_shows_drawers_verbatim() {
    let s = palace_with_closets(Fusion::default()).await;
    let r = s
        .palace
        .search_with(&SearchRequest::new("when do tomatoes need staking").limit(3))
        .await
        .unwrap();
    for h in &r.results {
        assert_eq!(h.closet_boost, 0.0);
        assert!(GARDEN_CHUNKS.contains(&h.text.as_str()) || h.source_path == TRAVEL);
    }
}

#[tokio::test]
async fn re_mining_or_deleting_a_file_drops_its_closets() {
    let s = palace_with_closets(Fusion::mempalace_3_11()).await;
    let p = &s.palace;
    assert_eq!(p.closet_count().await.unwrap(), 1);
    p.delete_by_source(GARDEN, true).await.unwrap();
    assert_eq!(
        p.closet_count().await.unwrap(),
        1,
        "a dry run deletes nothing"
    );
    let again = chunk(GARDEN, "garden", 0, GARDEN_CHUNKS[0]);
    let vectors = p
        .embedder()
        .embed(std::slice::from_ref(&again.text))
        .await
        .unwrap();
    p.import_closets(&[garden_closet()]).await.unwrap();
    p.file_mined(&[again], &vectors, &[]).await.unwrap();
    assert_eq!(
        p.closet_count().await.unwrap(),
        0,
        "re-mined: the closet is stale"
    );
    p.import_closets(&[garden_closet()]).await.unwrap();
    p.file_mined(&[], &[], &["drawer_wing_home_garden_0003".to_string()])
        .await
        .unwrap();
    assert_eq!(
        p.closet_count().await.unwrap(),
        0,
        "re-mined to fewer chunks: the closet is stale"
    );
    p.import_closets(&[garden_closet()]).await.unwrap();
    p.delete_by_source(GARDEN, false).await.unwrap();
    assert_eq!(p.closet_count().await.unwrap(), 0, "deleted with its file");
}

/// A closet index that always fails.
struct BrokenClosets;

#[async_trait::async_trait]
impl ClosetIndex for BrokenClosets {
    fn backend_name(&self) -> &'static str {
        "broken"
    }
    async fn upsert(&self, _: &[Closet]) -> mempalace_core::Result<()> {
        Err(PalaceError::store("closets", "upsert", "disk on fire"))
    }
    async fn insert_missing(&self, _: &[Closet]) -> mempalace_core::Result<usize> {
        Err(PalaceError::store(
            "closets",
            "insert_missing",
            "disk on fire",
        ))
    }
    async fn closet_rows(&self, _: Option<&str>, _: usize) -> mempalace_core::Result<Vec<Closet>> {
        Err(PalaceError::store("closets", "closet_rows", "disk on fire"))
    }
    async fn containing_any(
        &self,
        _: &[String],
        _: &ClosetScope,
        _: usize,
    ) -> mempalace_core::Result<Vec<Closet>> {
        Err(PalaceError::store("closets", "search", "disk on fire"))
    }
    async fn delete_for_sources(&self, _: &[String]) -> mempalace_core::Result<usize> {
        Ok(0)
    }
    async fn count(&self) -> mempalace_core::Result<u64> {
        Ok(0)
    }
}

#[tokio::test]
async fn closets_that_fail_leave_search_working_without_them() {
    let s = palace_with_closets(Fusion::mempalace_3_11()).await;
    let palace = s.palace.with_closets(Arc::new(BrokenClosets));
    let r = palace
        .search_with(&SearchRequest::new("when do tomatoes need staking").limit(3))
        .await
        .unwrap();
    assert_eq!(r.results.len(), 3);
    assert!(r.results.iter().all(|h| h.closet_boost == 0.0));
}

#[tokio::test]
async fn bad_closets_are_refused_and_file_nothing() {
    let s = palace_with_closets(Fusion::mempalace_3_11()).await;
    let mut bad = garden_closet();
    bad.id = "closet_2".into();
    bad.wing = "../etc".into();
    let good = Closet {
        id: "closet_3".into(),
        ..garden_closet()
    };
    assert!(matches!(
        s.palace.import_closets(&[good, bad]).await,
        Err(PalaceError::InvalidInput { .. })
    ));
    let mut empty = garden_closet();
    empty.text = "  ".into();
    assert!(s.palace.import_closets(&[empty]).await.is_err());
    assert_eq!(s.palace.closet_count().await.unwrap(), 1);
}
