//! The backend conformance suite, plus Qdrant-specific checks, against a live Qdrant server
//! at `QDRANT_URL` (`QDRANT_API_KEY` is sent when set), read when the tests run:
//!
//! ```text
//! eval "$(bash ../shared/qdrant/start.sh)"    # or any server: QDRANT_URL=http://localhost:6334
//! cargo nextest run --workspace -E 'package(mempalace-store-qdrant)'
//! ```
//!
//! Without `QDRANT_URL` every test here says SKIPPED and why, and passes, unless
//! `MEMPALACE_REQUIRE_LIVE_SERVICES=1` (CI) makes the skip a failure. Every fixture uses its
//! own collection, deleted when dropped.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mempalace_conformance::corpus::{seeded, unit_vectors};
use mempalace_conformance::live_service::qdrant_url;
use mempalace_conformance::{Ranking, StoreFactory, StoreFixture, vector_store_conformance};
use mempalace_core::similarity::cosine_distance;
use mempalace_core::{DrawerFilter, PalaceError, VectorStore};
use mempalace_store_qdrant::ids::point_uuid;
use mempalace_store_qdrant::{QdrantOptions, QdrantStore};
use qdrant_client::Qdrant;
use qdrant_client::qdrant::{
    CreateCollectionBuilder, Distance, GetPointsBuilder, PayloadSchemaType, PointId, Query,
    QueryPointsBuilder, VectorParamsBuilder,
};

fn url() -> String {
    std::env::var("QDRANT_URL").expect("every test checks QDRANT_URL before it connects")
}

fn api_key() -> Option<String> {
    std::env::var("QDRANT_API_KEY")
        .ok()
        .filter(|k| !k.is_empty())
}

/// A collection name no other test (or earlier run) uses.
fn unique_collection(tag: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "mempalace_test_{tag}_{}_{nanos}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn options(tag: &str, dimension: usize) -> QdrantOptions {
    let mut o = QdrantOptions::new(url(), dimension).with_collection(&unique_collection(tag));
    o.api_key = api_key();
    o
}

fn raw_client() -> Qdrant {
    Qdrant::from_url(&url())
        .api_key(api_key())
        .skip_compatibility_check()
        .build()
        .expect("raw Qdrant client")
}

/// Deletes its collection when dropped, on a private runtime and a fresh connection (the
/// fixture is dropped inside the test's runtime, which must not be blocked on).
struct DropCollection(String);

impl Drop for DropCollection {
    fn drop(&mut self) {
        let name = self.0.clone();
        let outcome = std::thread::spawn(move || -> Result<(), String> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async { raw_client().delete_collection(name.as_str()).await })
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
        .join();
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("could not delete test collection {}: {e}", self.0),
            Err(_) => eprintln!(
                "could not delete test collection {}: cleanup thread panicked",
                self.0
            ),
        }
    }
}

struct QdrantFactory;

#[async_trait::async_trait]
impl StoreFactory for QdrantFactory {
    async fn create(&self, dimension: usize) -> StoreFixture {
        let opts = options("conf", dimension);
        let guard = DropCollection(opts.collection.clone());
        let store = QdrantStore::connect(opts)
            .await
            .expect("connect to QDRANT_URL");
        StoreFixture::with_guard(Arc::new(store), guard)
    }
}

vector_store_conformance!(
    QdrantFactory,
    Ranking::Approximate { min_recall: 0.95 },
    requires = "QDRANT_URL"
);

async fn fresh(tag: &str, dimension: usize) -> (QdrantStore, DropCollection) {
    let opts = options(tag, dimension);
    let guard = DropCollection(opts.collection.clone());
    (QdrantStore::connect(opts).await.expect("connect"), guard)
}

/// `1 - distance` is Qdrant's own cosine score (and exact cosine) to 1e-4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn similarity_is_one_minus_distance_and_equals_qdrant_score() {
    if qdrant_url("similarity_is_one_minus_distance_and_equals_qdrant_score").is_none() {
        return;
    }
    const DIM: usize = 64;
    let (store, _guard) = fresh("score", DIM).await;
    let (drawers, vectors) = seeded(21, 40, DIM);
    store.upsert(&drawers, &vectors).await.unwrap();
    let raw = raw_client();
    for q in unit_vectors(77, 5, DIM) {
        let hits = store.query(&q, &DrawerFilter::all(), 10).await.unwrap();
        assert_eq!(hits.len(), 10);
        let reply = raw
            .query(
                QueryPointsBuilder::new(store.collection())
                    .query(Query::new_nearest(q.clone()))
                    .limit(40)
                    .with_payload(true),
            )
            .await
            .unwrap();
        let scores: HashMap<String, f32> = reply
            .result
            .iter()
            .map(|p| (p.payload["drawer_id"].as_str().unwrap().clone(), p.score))
            .collect();
        for h in &hits {
            let similarity = 1.0 - h.distance;
            let score = scores[&h.drawer.id];
            assert!(
                (similarity - score).abs() < 1e-4,
                "{}: 1 - distance = {similarity}, Qdrant score {score}",
                h.drawer.id
            );
            let i = drawers.iter().position(|d| d.id == h.drawer.id).unwrap();
            let exact = 1.0 - cosine_distance(&q, &vectors[i]);
            assert!(
                (similarity - exact).abs() < 1e-4,
                "{}: {similarity} vs exact cosine {exact}",
                h.drawer.id
            );
        }
    }
}

/// One palace, one collection: the owner is recorded at creation, another palace's store
/// is refused on connect, and an unowned (older) collection is claimed by the first owner.
/// Lexical hits come with their dense vector, so hybrid search needs no second query
/// for their distance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lexical_hits_carry_their_dense_vector() {
    if qdrant_url("lexical_hits_carry_their_dense_vector").is_none() {
        return;
    }
    const DIM: usize = 16;
    let (store, _guard) = fresh("lexvec", DIM).await;
    let (mut drawers, vectors) = seeded(23, 3, DIM);
    drawers[1].text = "the greyhound raced past the lighthouse".into();
    store.upsert(&drawers, &vectors).await.unwrap();
    let hits = store
        .lexical_query("greyhound", &DrawerFilter::all(), 5)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    let v = hits[0].vector.as_ref().expect("the dense vector");
    assert!(cosine_distance(v, &vectors[1]) < 1e-5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collection_owned_by_another_palace_is_refused() {
    if qdrant_url("a_collection_owned_by_another_palace_is_refused").is_none() {
        return;
    }
    let (plain, _guard) = fresh("owner", 8).await;
    plain.create_if_missing().await.unwrap();
    let owned = |owner: &str| {
        let mut o = QdrantOptions::new(url(), 8)
            .with_collection(plain.collection())
            .with_owner(owner);
        o.api_key = api_key();
        o
    };
    // Unowned: the first palace claims it, then it is that palace's.
    let a = QdrantStore::connect(owned("palace_a")).await.unwrap();
    let (drawers, vectors) = seeded(5, 3, 8);
    a.upsert(&drawers, &vectors).await.unwrap();
    QdrantStore::connect(owned("palace_a")).await.unwrap();
    match QdrantStore::connect(owned("palace_b")).await {
        Err(PalaceError::InvalidInput { field, reason }) => {
            assert_eq!(field, "collection");
            assert!(
                reason.contains("palace_a") && reason.contains("palace_b"),
                "{reason}"
            );
        }
        other => panic!("another palace's collection must be refused, got {other:?}"),
    }
    // A collection created by an owner records it from the start.
    let name = unique_collection("owned");
    let _guard2 = DropCollection(name.clone());
    let mut first = QdrantOptions::new(url(), 8)
        .with_collection(&name)
        .with_owner("one");
    first.api_key = api_key();
    let one = QdrantStore::connect(first.clone()).await.unwrap();
    one.create_if_missing().await.unwrap();
    let mut second = first.clone();
    second.owner = Some("two".into());
    assert!(QdrantStore::connect(second).await.is_err());
    assert_eq!(
        a.count(&DrawerFilter::all()).await.unwrap(),
        3,
        "nothing changed"
    );
}

/// A collection made with another dimension is refused with both dimensions named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_collection_of_another_dimension_is_refused() {
    if qdrant_url("existing_collection_of_another_dimension_is_refused").is_none() {
        return;
    }
    let (small, _guard) = fresh("dim", 8).await;
    small.create_if_missing().await.unwrap();
    let mut other = QdrantOptions::new(url(), 16).with_collection(small.collection());
    other.api_key = api_key();
    match QdrantStore::connect(other).await {
        Err(PalaceError::DimensionMismatch {
            expected,
            actual,
            context,
        }) => {
            assert_eq!((expected, actual), (8, 16));
            assert!(context.contains(small.collection()), "{context}");
        }
        other => panic!("expected DimensionMismatch, got {other:?}"),
    }
}

/// A collection with another distance is refused, not silently reused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn existing_collection_with_another_distance_is_refused() {
    if qdrant_url("existing_collection_with_another_distance_is_refused").is_none() {
        return;
    }
    let name = unique_collection("dist");
    let _guard = DropCollection(name.clone());
    raw_client()
        .create_collection(
            CreateCollectionBuilder::new(name.as_str())
                .vectors_config(VectorParamsBuilder::new(8, Distance::Dot)),
        )
        .await
        .unwrap();
    let mut opts = QdrantOptions::new(url(), 8).with_collection(&name);
    opts.api_key = api_key();
    match QdrantStore::connect(opts).await {
        Err(PalaceError::InvalidInput { field, reason }) => {
            assert_eq!(field, "collection");
            assert!(reason.contains("Dot"), "{reason}");
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

/// Creation adds keyword indexes on wing, room, source_file and drawer_id; points are
/// addressed by the UUID v5 of the drawer id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_and_point_ids_are_as_documented() {
    if qdrant_url("indexes_and_point_ids_are_as_documented").is_none() {
        return;
    }
    let (store, _guard) = fresh("layout", 8).await;
    let (drawers, vectors) = seeded(3, 2, 8);
    store.upsert(&drawers, &vectors).await.unwrap();
    let raw = raw_client();
    let info = raw
        .collection_info(store.collection())
        .await
        .unwrap()
        .result
        .unwrap();
    for field in ["wing", "room", "source_file", "drawer_id"] {
        let schema = info
            .payload_schema
            .get(field)
            .unwrap_or_else(|| panic!("no index on {field}"));
        assert_eq!(
            schema.data_type,
            PayloadSchemaType::Keyword as i32,
            "{field}"
        );
    }
    let id = PointId::from(point_uuid(&drawers[1].id).to_string());
    let got = raw
        .get_points(GetPointsBuilder::new(store.collection(), vec![id]).with_payload(true))
        .await
        .unwrap();
    assert_eq!(got.result.len(), 1);
    assert_eq!(
        got.result[0].payload["drawer_id"].as_str().unwrap(),
        &drawers[1].id
    );
}

/// After the collection disappears behind the store's back, reads see an empty store,
/// `exists` says so, and the next upsert recreates it: no stale state survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_recovers_when_the_collection_is_dropped_externally() {
    if qdrant_url("store_recovers_when_the_collection_is_dropped_externally").is_none() {
        return;
    }
    let (store, _guard) = fresh("recover", 8).await;
    let (drawers, vectors) = seeded(4, 5, 8);
    store.upsert(&drawers, &vectors).await.unwrap();
    raw_client()
        .delete_collection(store.collection())
        .await
        .unwrap();
    assert!(!store.exists().await.unwrap());
    assert_eq!(store.count(&DrawerFilter::all()).await.unwrap(), 0);
    assert!(
        store
            .query(&vectors[0], &DrawerFilter::all(), 3)
            .await
            .unwrap()
            .is_empty()
    );
    store.upsert(&drawers, &vectors).await.unwrap();
    assert!(store.exists().await.unwrap());
    assert_eq!(store.count(&DrawerFilter::all()).await.unwrap(), 5);
    assert!(store.delete_collection().await.unwrap());
    assert!(!store.exists().await.unwrap());
}

/// `repair-status` on Qdrant: the points and segments the server counts, no problem on a
/// healthy collection, and nothing at all before the collection exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_counts_points_and_segments_of_a_green_collection() {
    if qdrant_url("health_counts_points_and_segments_of_a_green_collection").is_none() {
        return;
    }
    const DIM: usize = 32;
    let (store, _guard) = fresh("health", DIM).await;
    let (drawers, vectors) = seeded(31, 25, DIM);
    store.upsert(&drawers, &vectors).await.unwrap();
    let health = store.health().await.unwrap();
    assert_eq!(health.backend, "qdrant");
    assert_eq!(health.rows, 25);
    assert!(health.fragments.unwrap() >= 1, "{health:?}");
    assert!(health.problems.is_empty(), "{health:?}");
    store.delete_collection().await.unwrap();
    let gone = store.health().await.unwrap();
    assert_eq!((gone.rows, gone.fragments), (0, None));
}
