//! Behaviour tests for `VectorStore` implementations (run them with
//! [`crate::vector_store_conformance!`]).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use mempalace_core::{DrawerFilter, DrawerMove, MemoryStore, Page, PalaceError, VectorStore};

use crate::corpus::{ROOMS, WINGS, drawer, seeded, unit_vectors};
use crate::fixtures::{Ranking, StoreFactory};

/// Vector dimension used by the suite (that of all-MiniLM-L6-v2).
pub const DIM: usize = 384;
/// Distances must agree with exact cosine to this tolerance.
pub const DISTANCE_TOLERANCE: f32 = 1e-4;

/// A reference store holding the same data.
async fn reference(drawers: &[mempalace_core::Drawer], vectors: &[Vec<f32>]) -> MemoryStore {
    let r = MemoryStore::new(DIM);
    r.upsert(drawers, vectors).await.unwrap();
    r
}

async fn loaded<F: StoreFactory + ?Sized>(
    factory: &F,
    n: usize,
) -> (crate::StoreFixture, MemoryStore, Vec<Vec<f32>>) {
    let fx = factory.create(DIM).await;
    let (drawers, vectors) = seeded(7, n, DIM);
    for (chunk_d, chunk_v) in drawers.chunks(250).zip(vectors.chunks(250)) {
        fx.store.upsert(chunk_d, chunk_v).await.unwrap();
    }
    let r = reference(&drawers, &vectors).await;
    (fx, r, vectors)
}

/// A fresh store does not exist; once created it is empty and answers every read.
pub async fn empty_store_behaviour<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    assert_eq!(s.dimension(), DIM);
    assert!(
        !s.exists().await.unwrap(),
        "a fresh store must not exist before create/upsert"
    );
    s.create_if_missing().await.unwrap();
    s.create_if_missing().await.unwrap();
    assert!(s.exists().await.unwrap());
    let q = unit_vectors(1, 1, DIM).remove(0);
    assert!(
        s.query(&q, &DrawerFilter::all(), 5)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(s.get(&["nope".into()]).await.unwrap().is_empty());
    assert_eq!(s.delete(&["nope".into()]).await.unwrap(), 0);
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 0);
    assert!(
        s.room_counts(&DrawerFilter::all())
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        s.list(&DrawerFilter::all(), Page::first(10))
            .await
            .unwrap()
            .is_empty()
    );
}

/// Upserted drawers come back field for field; get skips missing ids; delete counts.
pub async fn upsert_get_delete_round_trip<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let (mut drawers, vectors) = seeded(11, 3, DIM);
    drawers[1].metadata.added_by = mempalace_core::AddedBy::Mcp;
    drawers[1].metadata.source_file = String::new();
    drawers[2].text = "line one\nline two\ttabbed \"quoted\" 'single' \\ back".into();
    s.upsert(&drawers, &vectors).await.unwrap();
    assert!(s.exists().await.unwrap(), "upsert creates the store");
    let ids: Vec<String> = vec![
        drawers[2].id.clone(),
        "missing".into(),
        drawers[0].id.clone(),
    ];
    let got = s.get(&ids).await.unwrap();
    assert_eq!(
        got,
        vec![drawers[2].clone(), drawers[0].clone()],
        "get returns drawers in the order asked, skipping missing ids"
    );
    assert_eq!(
        s.get(&[drawers[1].id.clone()]).await.unwrap(),
        vec![drawers[1].clone()]
    );
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 3);
    assert_eq!(
        s.delete(&[drawers[0].id.clone(), "missing".into()])
            .await
            .unwrap(),
        1
    );
    assert_eq!(s.delete(&[drawers[0].id.clone()]).await.unwrap(), 0);
    assert!(s.get(&[drawers[0].id.clone()]).await.unwrap().is_empty());
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 2);
    let hits = s
        .query(&vectors[0], &DrawerFilter::all(), 10)
        .await
        .unwrap();
    assert!(
        hits.iter().all(|h| h.drawer.id != drawers[0].id),
        "a deleted drawer is never found"
    );
}

/// Re-filing an id replaces text, metadata and vector; the count does not grow.
pub async fn upsert_replaces_same_id<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let (drawers, vectors) = seeded(12, 20, DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let mut changed = drawers[5].clone();
    changed.text = "replaced text".into();
    changed.metadata.room = "billing".into();
    changed.metadata.chunk_index = 99;
    let new_vector = unit_vectors(99, 1, DIM).remove(0);
    s.upsert(
        std::slice::from_ref(&changed),
        std::slice::from_ref(&new_vector),
    )
    .await
    .unwrap();
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 20);
    assert_eq!(
        s.get(&[changed.id.clone()]).await.unwrap(),
        vec![changed.clone()]
    );
    let top = s.query(&new_vector, &DrawerFilter::all(), 1).await.unwrap();
    assert_eq!(top[0].drawer.id, changed.id);
    assert!(
        top[0].distance.abs() < DISTANCE_TOLERANCE,
        "distance to its own vector is 0, got {}",
        top[0].distance
    );
    let old = s.query(&vectors[5], &DrawerFilter::all(), 1).await.unwrap();
    assert!(
        old[0].drawer.id != changed.id || old[0].distance > 0.5,
        "the old vector is gone"
    );
}

/// `relocate` moves drawers to new wings and rooms keeping text, vector and other metadata;
/// ids not stored are skipped; filters, counts and search see the new places.
pub async fn relocate_moves_drawers_and_keeps_their_vectors<F: StoreFactory + ?Sized>(
    factory: &F,
    _: Ranking,
) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let (drawers, vectors) = seeded(21, 30, DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let moves = vec![
        DrawerMove {
            id: drawers[3].id.clone(),
            wing: "moved wing".into(),
            room: "new room".into(),
        },
        DrawerMove {
            id: drawers[7].id.clone(),
            wing: "moved wing".into(),
            room: "other room".into(),
        },
        DrawerMove {
            id: drawers[9].id.clone(),
            wing: drawers[9].metadata.wing.clone(),
            room: "it's a room".into(),
        },
        DrawerMove {
            id: "no such drawer".into(),
            wing: "moved wing".into(),
            room: "new room".into(),
        },
    ];
    assert_eq!(s.relocate(&moves).await.unwrap(), 3);
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 30);
    assert_eq!(s.count(&DrawerFilter::wing("moved wing")).await.unwrap(), 2);
    for (i, m) in [(3, &moves[0]), (7, &moves[1]), (9, &moves[2])] {
        let mut expected = drawers[i].clone();
        expected.metadata.wing = m.wing.clone();
        expected.metadata.room = m.room.clone();
        assert_eq!(
            s.get(&[expected.id.clone()]).await.unwrap(),
            vec![expected.clone()]
        );
        let top = s
            .query(
                &vectors[i],
                &DrawerFilter::wing(&m.wing).with_room(&m.room),
                1,
            )
            .await
            .unwrap();
        assert_eq!(
            top[0].drawer.id, expected.id,
            "found by its vector in its new room"
        );
        assert!(
            top[0].distance.abs() < DISTANCE_TOLERANCE,
            "its vector is unchanged"
        );
    }
    assert!(
        s.get(&["no such drawer".to_string()])
            .await
            .unwrap()
            .is_empty(),
        "a move of a missing id creates nothing"
    );
    let counts = s
        .room_counts(&DrawerFilter::wing("moved wing"))
        .await
        .unwrap();
    assert_eq!(
        counts
            .iter()
            .map(|c| (c.room.as_str(), c.count))
            .collect::<Vec<_>>(),
        vec![("new room", 1), ("other room", 1)]
    );
    assert_eq!(s.relocate(&[]).await.unwrap(), 0);
}

/// `vectors` reads back the stored vectors in the order asked, skipping missing ids.
pub async fn vectors_read_back_what_was_stored<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let (drawers, vectors) = seeded(31, 12, DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let ids = vec![
        drawers[7].id.clone(),
        "no such drawer".to_string(),
        drawers[2].id.clone(),
    ];
    let got = s.vectors(&ids).await.unwrap();
    assert_eq!(
        got.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        vec![drawers[7].id.as_str(), drawers[2].id.as_str()]
    );
    for ((_, v), i) in got.iter().zip([7, 2]) {
        assert_eq!(v.len(), DIM);
        for (a, b) in v.iter().zip(&vectors[i]) {
            assert!((a - b).abs() < 1e-6, "vector {i} read back as stored");
        }
    }
    assert!(s.vectors(&[]).await.unwrap().is_empty());
}

fn filters() -> Vec<DrawerFilter> {
    vec![
        DrawerFilter::all(),
        DrawerFilter::wing(WINGS[0]),
        DrawerFilter::wing(WINGS[2]),
        DrawerFilter::room(ROOMS[1]),
        DrawerFilter::room(ROOMS[3]),
        DrawerFilter::wing(WINGS[1]).with_room(ROOMS[0]),
        DrawerFilter::wing(WINGS[2]).with_room(ROOMS[3]),
        DrawerFilter::wing(WINGS[0])
            .with_source_file(format!("/src/{}/{}/notes.md", WINGS[0], ROOMS[2])),
        DrawerFilter::wing("no such wing"),
        DrawerFilter::wing(WINGS[0]).with_room("no such room"),
    ]
}

/// Filters by wing, room, both and source file select exactly the matching drawers.
pub async fn filters_by_wing_room_and_source<F: StoreFactory + ?Sized>(
    factory: &F,
    ranking: Ranking,
) {
    let (fx, r, vectors) = loaded(factory, 240).await;
    for filter in filters() {
        let expected_count = r.count(&filter).await.unwrap();
        assert_eq!(
            fx.store.count(&filter).await.unwrap(),
            expected_count,
            "count {filter:?}"
        );
        let listed = fx.store.list(&filter, Page::first(1000)).await.unwrap();
        let want = r.list(&filter, Page::first(1000)).await.unwrap();
        assert_eq!(listed, want, "list {filter:?}");
        for q in [&vectors[3], &vectors[100]] {
            let hits = fx.store.query(q, &filter, 10).await.unwrap();
            assert!(
                hits.iter().all(|h| filter.matches(&h.drawer)),
                "query {filter:?} returned a drawer outside the filter"
            );
            let exact = r.query(q, &filter, 10).await.unwrap();
            assert_eq!(
                hits.len(),
                exact.len(),
                "query {filter:?} must fill the limit from inside the filter"
            );
            if ranking == Ranking::Exact {
                let a: Vec<_> = hits.iter().map(|h| &h.drawer.id).collect();
                let b: Vec<_> = exact.iter().map(|h| &h.drawer.id).collect();
                assert_eq!(a, b, "filtered ranking {filter:?}");
            }
        }
    }
}

/// Top-k equals the exact reference (or reaches the recall bar) and distances match cosine.
pub async fn ranking_matches_exact_reference<F: StoreFactory + ?Sized>(
    factory: &F,
    ranking: Ranking,
) {
    let (fx, r, _) = loaded(factory, 600).await;
    let queries = unit_vectors(4242, 25, DIM);
    let mut recall_sum = 0.0;
    for q in &queries {
        let hits = fx.store.query(q, &DrawerFilter::all(), 10).await.unwrap();
        let exact = r.query(q, &DrawerFilter::all(), 10).await.unwrap();
        assert_eq!(hits.len(), 10);
        let exact_by_id: BTreeMap<_, _> = exact
            .iter()
            .map(|n| (n.drawer.id.clone(), n.distance))
            .collect();
        for pair in hits.windows(2) {
            assert!(
                pair[0].distance <= pair[1].distance + DISTANCE_TOLERANCE,
                "results must be sorted by distance"
            );
        }
        let all_exact = r.query(q, &DrawerFilter::all(), 600).await.unwrap();
        let truth: BTreeMap<_, _> = all_exact
            .iter()
            .map(|n| (n.drawer.id.clone(), n.distance))
            .collect();
        for h in &hits {
            let d = truth[&h.drawer.id];
            assert!(
                (h.distance - d).abs() < DISTANCE_TOLERANCE,
                "distance of {} is {}, exact {}",
                h.drawer.id,
                h.distance,
                d
            );
        }
        let found = hits
            .iter()
            .filter(|h| exact_by_id.contains_key(&h.drawer.id))
            .count();
        recall_sum += found as f64 / 10.0;
        if ranking == Ranking::Exact {
            let a: Vec<_> = hits.iter().map(|h| h.drawer.id.clone()).collect();
            let b: Vec<_> = exact.iter().map(|h| h.drawer.id.clone()).collect();
            assert_eq!(a, b);
        }
    }
    let recall = recall_sum / queries.len() as f64;
    if let Ranking::Approximate { min_recall } = ranking {
        assert!(
            recall >= min_recall,
            "recall@10 {recall} below {min_recall}"
        );
    }
}

/// `nearest_ids` names the drawers `query` finds, in its order and at its distances, within
/// every filter, and finds nothing in an empty store or for a bad vector.
pub async fn nearest_ids_rank_as_query_does<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let empty = factory.create(DIM).await;
    let q = unit_vectors(99, 1, DIM).remove(0);
    assert!(
        empty
            .store
            .nearest_ids(&q, &DrawerFilter::all(), 5)
            .await
            .unwrap()
            .is_empty()
    );
    let (fx, _, vectors) = loaded(factory, 300).await;
    let mut queries = unit_vectors(4343, 6, DIM);
    queries.push(vectors[17].clone());
    for filter in filters() {
        for q in &queries {
            for limit in [1, 5, 12] {
                let hits = fx.store.query(q, &filter, limit).await.unwrap();
                let ids = fx.store.nearest_ids(q, &filter, limit).await.unwrap();
                assert_eq!(
                    ids.iter().map(|n| &n.id).collect::<Vec<_>>(),
                    hits.iter().map(|h| &h.drawer.id).collect::<Vec<_>>(),
                    "nearest_ids {filter:?} limit {limit}"
                );
                for (n, h) in ids.iter().zip(&hits) {
                    assert!((n.distance - h.distance).abs() < DISTANCE_TOLERANCE);
                }
            }
        }
    }
    let own = fx
        .store
        .nearest_ids(&vectors[17], &DrawerFilter::all(), 1)
        .await
        .unwrap();
    assert!(
        own[0].distance.abs() < DISTANCE_TOLERANCE,
        "a drawer is nearest to itself"
    );
    assert!(matches!(
        fx.store
            .nearest_ids(&[1.0; 3], &DrawerFilter::all(), 3)
            .await,
        Err(PalaceError::DimensionMismatch { .. })
    ));
}

/// Per-(wing, room) counts equal the reference's, sorted by wing then room.
pub async fn room_counts_match_reference<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let (fx, r, _) = loaded(factory, 250).await;
    for filter in filters() {
        assert_eq!(
            fx.store.room_counts(&filter).await.unwrap(),
            r.room_counts(&filter).await.unwrap(),
            "room_counts {filter:?}"
        );
    }
    let total: u64 = fx
        .store
        .room_counts(&DrawerFilter::all())
        .await
        .unwrap()
        .iter()
        .map(|c| c.count)
        .sum();
    assert_eq!(total, 250);
}

/// Pages in id order cover every drawer exactly once.
pub async fn paging_is_stable_and_complete<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let (fx, r, _) = loaded(factory, 101).await;
    for filter in [DrawerFilter::all(), DrawerFilter::wing(WINGS[1])] {
        let mut seen = Vec::new();
        let mut offset = 0;
        loop {
            let page = fx
                .store
                .list(&filter, Page { offset, limit: 7 })
                .await
                .unwrap();
            assert!(page.len() <= 7);
            if page.is_empty() {
                break;
            }
            offset += page.len();
            seen.extend(page.into_iter().map(|d| d.id));
        }
        let want: Vec<String> = r
            .list(&filter, Page::first(1000))
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.id)
            .collect();
        assert_eq!(seen, want, "paging {filter:?}");
        let unique: HashSet<_> = seen.iter().collect();
        assert_eq!(unique.len(), seen.len());
    }
    let past_end = fx
        .store
        .list(
            &DrawerFilter::all(),
            Page {
                offset: 500,
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert!(past_end.is_empty());
}

/// Drawers filed with `insert_new` (new ids, as add_drawer makes them) are stored once each,
/// found by get, count and query, replaced by a later upsert; a bad vector files none of
/// its batch.
pub async fn insert_new_files_fresh_drawers<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let (mut drawers, mut vectors) = seeded(17, 6, DIM);
    s.insert_new(&[], &[]).await.unwrap();
    s.insert_new(&drawers[..3], &vectors[..3]).await.unwrap();
    assert!(s.exists().await.unwrap(), "insert_new creates the store");
    s.insert_new(&drawers[3..5], &vectors[3..5]).await.unwrap();
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 5);
    let ids: Vec<String> = drawers[..5].iter().map(|d| d.id.clone()).collect();
    assert_eq!(s.get(&ids).await.unwrap(), drawers[..5].to_vec());
    let hit = s.query(&vectors[4], &DrawerFilter::all(), 1).await.unwrap();
    assert_eq!(hit[0].drawer.id, drawers[4].id);
    assert!(hit[0].distance.abs() < DISTANCE_TOLERANCE);
    drawers[1].text = "replaced by an upsert".into();
    s.upsert(&drawers[1..2], &vectors[1..2]).await.unwrap();
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 5);
    assert_eq!(
        s.get(&[drawers[1].id.clone()]).await.unwrap(),
        vec![drawers[1].clone()]
    );
    vectors[5] = vec![0.5; DIM + 1];
    assert!(matches!(
        s.insert_new(&drawers[5..], &vectors[5..]).await,
        Err(PalaceError::DimensionMismatch { .. })
    ));
    assert!(s.insert_new(&drawers[5..], &[]).await.is_err());
    assert_eq!(
        s.count(&DrawerFilter::all()).await.unwrap(),
        5,
        "no drawer of a bad batch is stored"
    );
}

/// A vector of the wrong dimension is a typed error and nothing of its batch is written.
pub async fn dimension_mismatch_writes_nothing<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let (drawers, mut vectors) = seeded(13, 4, DIM);
    s.upsert(&drawers[..2], &vectors[..2]).await.unwrap();
    vectors[3] = vec![0.5; DIM - 1];
    match s.upsert(&drawers[2..], &vectors[2..]).await {
        Err(PalaceError::DimensionMismatch {
            expected, actual, ..
        }) => {
            assert_eq!((expected, actual), (DIM, DIM - 1));
        }
        other => panic!("expected a dimension mismatch, got {other:?}"),
    }
    assert_eq!(
        s.count(&DrawerFilter::all()).await.unwrap(),
        2,
        "no drawer of the bad batch is stored"
    );
    assert!(s.get(&[drawers[2].id.clone()]).await.unwrap().is_empty());
    assert!(matches!(
        s.query(&[1.0; 3], &DrawerFilter::all(), 3).await,
        Err(PalaceError::DimensionMismatch { .. })
    ));
    assert!(
        s.upsert(&drawers[2..3], &[]).await.is_err(),
        "drawers and vectors must pair up"
    );
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 2);
}

/// Chinese, Japanese and emoji survive in text and in wing/room names, and filter correctly.
pub async fn unicode_text_and_names<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let items = [
        ("u1", "项目", "认证", "上个月我们为什么决定用 Clerk？"),
        ("u2", "项目", "🚀 launch", "ローンチは金曜日 🚀🎉"),
        ("u3", "wing_ascii", "认证", "plain text"),
    ];
    let drawers: Vec<_> = items
        .iter()
        .map(|(id, w, r, t)| drawer(id, w, r, t))
        .collect();
    let vectors = unit_vectors(14, 3, DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let got = s.get(&["u1".into(), "u2".into()]).await.unwrap();
    assert_eq!(got, drawers[..2].to_vec());
    assert_eq!(s.count(&DrawerFilter::wing("项目")).await.unwrap(), 2);
    assert_eq!(s.count(&DrawerFilter::room("认证")).await.unwrap(), 2);
    let hits = s
        .query(
            &vectors[1],
            &DrawerFilter::wing("项目").with_room("🚀 launch"),
            5,
        )
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].drawer, drawers[1]);
}

/// Quotes and SQL-looking names are plain values: they filter exactly and inject nothing.
pub async fn hostile_filter_values_are_literal<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let names = [
        "o'brien",
        "x\" OR 1=1",
        "x' OR '1'='1",
        "a\\'b",
        "%",
        "_",
        "semi; DROP TABLE t; --",
    ];
    let hostile_id = |i: usize| format!("h{i}{}", names[i]);
    let hostile_source = |i: usize| format!("/src/{}/notes {i}.md", names[i]);
    let drawers: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut d = drawer(&hostile_id(i), n, n, &format!("hostile {i}"));
            d.metadata.source_file = hostile_source(i);
            d
        })
        .collect();
    let vectors = unit_vectors(15, names.len(), DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    for (i, n) in names.iter().enumerate() {
        for filter in [
            DrawerFilter::wing(*n),
            DrawerFilter::room(*n),
            DrawerFilter::wing(*n).with_room(*n),
            DrawerFilter::all().with_source_file(hostile_source(i)),
        ] {
            assert_eq!(s.count(&filter).await.unwrap(), 1, "count {filter:?}");
            let hits = s
                .query(&vectors[(i + 1) % names.len()], &filter, 10)
                .await
                .unwrap();
            assert_eq!(hits.len(), 1, "query {filter:?}");
            assert_eq!(hits[0].drawer.id, hostile_id(i));
            let listed = s.list(&filter, Page::first(10)).await.unwrap();
            assert_eq!(listed.len(), 1, "list {filter:?}");
        }
    }
    assert_eq!(s.count(&DrawerFilter::wing("x")).await.unwrap(), 0);
    assert_eq!(
        s.count(&DrawerFilter::all().with_source_file("/src/%"))
            .await
            .unwrap(),
        0,
        "a source_file filter is an exact match, never a pattern"
    );
    // Ids are literal too: in get and in delete.
    for (i, _) in names.iter().enumerate() {
        let got = s.get(&[hostile_id(i)]).await.unwrap();
        assert_eq!(got.len(), 1, "get {:?}", hostile_id(i));
        assert_eq!(got[0].id, hostile_id(i));
    }
    let not_ids: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    assert!(s.get(&not_ids).await.unwrap().is_empty());
    assert_eq!(
        s.delete(&not_ids).await.unwrap(),
        0,
        "no hostile id matches others"
    );
    assert_eq!(
        s.count(&DrawerFilter::all()).await.unwrap(),
        names.len() as u64,
        "nothing was dropped or changed"
    );
    assert_eq!(s.delete(&[hostile_id(1)]).await.unwrap(), 1);
    assert!(s.get(&[hostile_id(1)]).await.unwrap().is_empty());
    assert_eq!(
        s.count(&DrawerFilter::all()).await.unwrap(),
        names.len() as u64 - 1,
        "exactly the one drawer was deleted"
    );
}

/// Many tasks upserting at once lose nothing.
pub async fn concurrent_upserts_all_land<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let fx = factory.create(DIM).await;
    let store: Arc<dyn VectorStore> = Arc::clone(&fx.store);
    store.create_if_missing().await.unwrap();
    let (drawers, vectors) = seeded(16, 120, DIM);
    let mut tasks = Vec::new();
    for t in 0..6 {
        let store = Arc::clone(&store);
        let mine: Vec<_> = (t * 20..(t + 1) * 20).collect();
        let (d, v): (Vec<_>, Vec<_>) = mine
            .iter()
            .map(|i| (drawers[*i].clone(), vectors[*i].clone()))
            .unzip();
        tasks.push(tokio::spawn(async move {
            for (dd, vv) in d.chunks(4).zip(v.chunks(4)) {
                store.upsert(dd, vv).await.unwrap();
            }
        }));
    }
    for t in futures::future::join_all(tasks).await {
        t.unwrap();
    }
    assert_eq!(store.count(&DrawerFilter::all()).await.unwrap(), 120);
    let ids: Vec<String> = drawers.iter().map(|d| d.id.clone()).collect();
    assert_eq!(store.get(&ids).await.unwrap().len(), 120);
}

/// Asking for more results than exist returns all of them.
pub async fn limit_larger_than_store<F: StoreFactory + ?Sized>(factory: &F, _: Ranking) {
    let (fx, _, vectors) = loaded(factory, 9).await;
    let hits = fx
        .store
        .query(&vectors[0], &DrawerFilter::all(), 50)
        .await
        .unwrap();
    assert_eq!(hits.len(), 9);
    assert_eq!(hits[0].drawer.id, "d00000");
    assert_eq!(
        fx.store
            .list(&DrawerFilter::all(), Page::first(50))
            .await
            .unwrap()
            .len(),
        9
    );
}

/// The fixed corpus of the lexical tests: distinctive words, some accented or non-Latin.
fn lexical_corpus() -> Vec<mempalace_core::Drawer> {
    let texts = [
        (
            "lx0",
            "wing_a",
            "The lighthouse keeper repaired the beacon lens on Tuesday night.",
        ),
        (
            "lx1",
            "wing_a",
            "Quarterly budget review for the marketing department is due.",
        ),
        (
            "lx2",
            "wing_a",
            "Caroline adopted a rescue greyhound named Biscuit last spring.",
        ),
        (
            "lx3",
            "wing_b",
            "The deploy pipeline fails whenever the cache volume is full.",
        ),
        (
            "lx4",
            "wing_b",
            "Sourdough starter needs feeding twice daily with rye flour.",
        ),
        (
            "lx5",
            "wing_b",
            "Réunion à Montréal: le café ouvre à huit heures.",
        ),
        ("lx6", "wing_b", "Встреча в Москве перенесена на пятницу."),
        (
            "lx7",
            "wing_a",
            "Biscuit the greyhound chased the lighthouse cat across the dunes.",
        ),
    ];
    texts
        .iter()
        .map(|(id, wing, text)| drawer(id, wing, "room", text))
        .collect()
}

fn lexical_ids(hits: &[mempalace_core::LexicalHit]) -> Vec<&str> {
    hits.iter().map(|h| h.drawer.id.as_str()).collect()
}

/// The lexical channel finds drawers by their words (case-insensitive, Unicode), ranks rarer
/// and denser matches first, honours filters, and reflects updates and deletes at once.
pub async fn lexical_query_finds_words_and_honours_filters<F: StoreFactory + ?Sized>(
    factory: &F,
    _: Ranking,
) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    assert!(
        s.lexical_query("greyhound", &DrawerFilter::all(), 5)
            .await
            .unwrap()
            .is_empty(),
        "an empty store finds nothing"
    );
    let drawers = lexical_corpus();
    let vectors = unit_vectors(31, drawers.len(), DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let all = DrawerFilter::all();
    for (query, best) in [
        ("beacon lens", "lx0"),
        ("BUDGET Review", "lx1"),
        ("Caroline greyhound", "lx2"),
        ("cache volume", "lx3"),
        ("sourdough rye", "lx4"),
        ("Montréal café", "lx5"),
        ("Москве", "lx6"),
    ] {
        let hits = s.lexical_query(query, &all, 5).await.unwrap();
        assert_eq!(
            hits.first().map(|h| h.drawer.id.as_str()),
            Some(best),
            "{query:?} → {:?}",
            lexical_ids(&hits)
        );
        for pair in hits.windows(2) {
            assert!(pair[0].score >= pair[1].score, "best first: {query:?}");
        }
        // A vector returned with a hit is the one stored with that drawer (search computes
        // the hit's distance from it).
        for h in &hits {
            if let Some(v) = &h.vector {
                let i = drawers.iter().position(|d| d.id == h.drawer.id).unwrap();
                assert_eq!(v, &vectors[i], "vector of {}", h.drawer.id);
            }
        }
    }
    // Only drawers sharing a word come back; the limit and the filters are honoured.
    let both = s.lexical_query("greyhound", &all, 10).await.unwrap();
    let mut found = lexical_ids(&both);
    found.sort_unstable();
    assert_eq!(found, vec!["lx2", "lx7"]);
    assert_eq!(
        s.lexical_query("greyhound", &all, 1).await.unwrap().len(),
        1
    );
    assert!(
        s.lexical_query("zeppelin", &all, 5)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(s.lexical_query("  ... ", &all, 5).await.unwrap().is_empty());
    let in_b = s
        .lexical_query(
            "greyhound lighthouse cache",
            &DrawerFilter::wing("wing_b"),
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        lexical_ids(&in_b),
        vec!["lx3"],
        "the wing filter runs inside the backend"
    );
    let only = s
        .lexical_query(
            "greyhound",
            &DrawerFilter::all().with_ids(vec!["lx7".into()]),
            10,
        )
        .await
        .unwrap();
    assert_eq!(lexical_ids(&only), vec!["lx7"]);
    // Updates and deletes show at once.
    let mut changed = drawers[2].clone();
    changed.text = "Caroline now keeps bees on the allotment.".into();
    s.upsert(std::slice::from_ref(&changed), &vectors[2..3])
        .await
        .unwrap();
    let after = s.lexical_query("greyhound", &all, 10).await.unwrap();
    assert_eq!(
        lexical_ids(&after),
        vec!["lx7"],
        "old words of an updated drawer are gone"
    );
    let bees = s.lexical_query("bees allotment", &all, 10).await.unwrap();
    assert_eq!(lexical_ids(&bees), vec!["lx2"], "new words are found");
    s.delete(&["lx7".to_string()]).await.unwrap();
    assert!(
        s.lexical_query("greyhound", &all, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Id lists and filing-time windows run inside the backend for every read.
pub async fn id_and_time_filters_are_pushed_down<F: StoreFactory + ?Sized>(
    factory: &F,
    _: Ranking,
) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let mut drawers = lexical_corpus();
    for (i, d) in drawers.iter_mut().enumerate() {
        d.metadata.filed_at = format!("2026-0{}-15T10:00:00.000000", i + 1);
    }
    let vectors = unit_vectors(32, drawers.len(), DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let window = DrawerFilter::all().filed_between(
        Some("2026-03-15T10:00:00".into()),
        Some("2026-06-01T00:00:00".into()),
    );
    assert_eq!(s.count(&window).await.unwrap(), 3, "March, April and May");
    let mut listed: Vec<String> = s
        .list(&window, Page::first(10))
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    listed.sort();
    assert_eq!(listed, vec!["lx2", "lx3", "lx4"]);
    let near = s.query(&vectors[0], &window, 10).await.unwrap();
    assert_eq!(near.len(), 3);
    assert!(
        near.iter()
            .all(|n| ["lx2", "lx3", "lx4"].contains(&n.drawer.id.as_str()))
    );
    let ids =
        DrawerFilter::wing("wing_a").with_ids(vec!["lx0".into(), "lx3".into(), "nope".into()]);
    let near = s.query(&vectors[3], &ids, 10).await.unwrap();
    assert_eq!(
        near.iter()
            .map(|n| n.drawer.id.as_str())
            .collect::<Vec<_>>(),
        vec!["lx0"],
        "ids and wing combine"
    );
    assert_eq!(
        s.count(&DrawerFilter::all().with_ids(Vec::new()))
            .await
            .unwrap(),
        0,
        "an empty id list matches nothing"
    );
    let since_only = DrawerFilter::all().filed_between(Some("2026-09-01T00:00:00".into()), None);
    assert_eq!(s.count(&since_only).await.unwrap(), 0);
    let before_only = DrawerFilter::all().filed_between(None, Some("2026-02-15T10:00:00".into()));
    assert_eq!(
        s.count(&before_only).await.unwrap(),
        1,
        "before is exclusive"
    );
}

/// A drawer's authored date and conversation record come back as filed, and time filters
/// date a drawer by when its words were written when that is known, else by its filing.
pub async fn authored_dates_round_trip_and_date_the_filters<F: StoreFactory + ?Sized>(
    factory: &F,
    _: Ranking,
) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    let mut drawers = lexical_corpus();
    for d in drawers.iter_mut() {
        // Everything filed today; lx0..lx2 spoken in January, February and March.
        d.metadata.filed_at = "2026-12-01T10:00:00.000000".into();
    }
    for (i, d) in drawers.iter_mut().take(3).enumerate() {
        d.metadata.authored_at = Some(format!("2025-0{}-10T09:00:00", i + 1));
        d.metadata.conversation = Some(mempalace_core::ConversationRef {
            id: format!("chat-{i}"),
            title: Some("Backups: \"pg_dump\" vs snapshots 🚀".into()),
            speakers: vec!["user".into(), "Ana María".into()],
            first_turn: 2 * i as u32,
            last_turn: 2 * i as u32 + 1,
            authored_until: Some(format!("2025-0{}-10T09:05:00", i + 1)),
            extract: mempalace_core::conversations::ExtractMode::General,
        });
    }
    let vectors = unit_vectors(33, drawers.len(), DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let mut got = s
        .get(&drawers.iter().map(|d| d.id.clone()).collect::<Vec<_>>())
        .await
        .unwrap();
    got.sort_by(|a, b| a.id.cmp(&b.id));
    let mut want = drawers.clone();
    want.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(
        got, want,
        "authored dates and conversation records round-trip"
    );
    let february_on = DrawerFilter::all().filed_between(Some("2025-02-01T00:00:00".into()), None);
    let dated: Vec<String> = {
        let mut ids: Vec<String> = s
            .list(
                &DrawerFilter::all().filed_between(
                    Some("2025-02-01T00:00:00".into()),
                    Some("2025-03-01T00:00:00".into()),
                ),
                Page::first(10),
            )
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.id)
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        dated,
        vec!["lx1"],
        "February by authored date, not by filing"
    );
    assert_eq!(
        s.count(&february_on).await.unwrap(),
        drawers.len() as u64 - 1,
        "undated drawers count by their filing date"
    );
    let near = s
        .query(
            &vectors[0],
            &DrawerFilter::all().filed_between(None, Some("2025-02-01T00:00:00".into())),
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        near.iter()
            .map(|n| n.drawer.id.as_str())
            .collect::<Vec<_>>(),
        vec!["lx0"]
    );
    assert_eq!(near[0].drawer.metadata, drawers[0].metadata);
}

/// `recent` answers the newest drawers by filing time (ties by id), within the filter, and
/// nothing from a store not created yet.
pub async fn recent_is_newest_first_within_the_filter<F: StoreFactory + ?Sized>(
    factory: &F,
    _: Ranking,
) {
    let fx = factory.create(DIM).await;
    let s = &fx.store;
    assert!(s.recent(&DrawerFilter::all(), 5).await.unwrap().is_empty());
    let times = [
        "2026-03-01T09:00:00",
        "2026-05-01T09:00:00",
        "2026-01-01T09:00:00",
        "2026-05-01T09:00:00",
        "2026-04-01T09:00:00",
        "2026-02-01T09:00:00",
    ];
    let drawers: Vec<_> = times
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut d = drawer(
                &format!("r{i}"),
                if i % 2 == 0 { "wing_a" } else { "wing_b" },
                "notes",
                &format!("note number {i}"),
            );
            d.metadata.filed_at = t.to_string();
            d
        })
        .collect();
    let vectors = unit_vectors(41, drawers.len(), DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    let ids = |v: Vec<mempalace_core::Drawer>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
    assert_eq!(
        ids(s.recent(&DrawerFilter::all(), 4).await.unwrap()),
        vec!["r1", "r3", "r4", "r0"],
        "newest first, equal times by id"
    );
    assert_eq!(
        ids(s.recent(&DrawerFilter::wing("wing_a"), 10).await.unwrap()),
        vec!["r4", "r0", "r2"]
    );
    assert!(s.recent(&DrawerFilter::all(), 0).await.unwrap().is_empty());
    let whole = s.recent(&DrawerFilter::all(), 1).await.unwrap();
    assert_eq!(whole[0].text, "note number 1", "drawers come back whole");
}
