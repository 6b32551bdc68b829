//! LanceDB-specific behaviour: the ANN index above the threshold, compaction, reopening,
//! dimension checks on open, and durability across a killed process.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use mempalace_conformance::corpus::{drawer, seeded, unit_vectors};
use mempalace_core::{Drawer, DrawerFilter, MemoryStore, PalaceError, VectorStore};
use mempalace_store_lance::{LanceOptions, LanceStore};

const DIM: usize = 384;

async fn store(
    dir: &std::path::Path,
    opts: impl FnOnce(LanceOptions) -> LanceOptions,
) -> LanceStore {
    LanceStore::open(opts(LanceOptions::new(dir.join("lance"), DIM)))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settling_indexes_new_rows_and_builds_the_ann_index_past_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_index_threshold(600)).await;
    let (drawers, vectors) = seeded(22, 700, DIM);
    s.upsert(&drawers[..500], &vectors[..500]).await.unwrap();
    assert_eq!(
        s.unindexed_rows().await.unwrap(),
        500,
        "the text index lags the writes"
    );
    s.settle().await.unwrap();
    assert_eq!(
        s.unindexed_rows().await.unwrap(),
        0,
        "settling folds new rows in"
    );
    assert!(
        !s.has_vector_index().await.unwrap(),
        "500 rows: below the threshold"
    );
    s.upsert(&drawers[500..], &vectors[500..]).await.unwrap();
    s.settle().await.unwrap();
    assert!(s.has_vector_index().await.unwrap(), "700 rows: indexed");
    assert_eq!(s.unindexed_rows().await.unwrap(), 0);
    assert!(
        !s.maintain().await.unwrap().built_vector_index,
        "built once"
    );
    let hit = s
        .query(&vectors[650], &DrawerFilter::all(), 1)
        .await
        .unwrap();
    assert_eq!(hit[0].drawer.id, drawers[650].id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearest_ids_find_what_query_finds_through_the_ann_index_and_the_unindexed_rows() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_index_threshold(200)).await;
    let (drawers, vectors) = seeded(23, 460, DIM);
    s.upsert(&drawers[..400], &vectors[..400]).await.unwrap();
    s.optimize().await.unwrap();
    assert!(s.has_vector_index().await.unwrap());
    // Rows written after the index: a query searches them without it.
    s.upsert(&drawers[400..], &vectors[400..]).await.unwrap();
    let mut queries = unit_vectors(77, 8, DIM);
    queries.push(vectors[420].clone());
    queries.push(vectors[30].clone());
    for q in &queries {
        for filter in [DrawerFilter::all(), DrawerFilter::wing("wing_code")] {
            for limit in [1, 5, 40] {
                let full = s.query(q, &filter, limit).await.unwrap();
                let ids = s.nearest_ids(q, &filter, limit).await.unwrap();
                assert_eq!(
                    ids.iter().map(|n| &n.id).collect::<Vec<_>>(),
                    full.iter().map(|n| &n.drawer.id).collect::<Vec<_>>()
                );
                for (n, f) in ids.iter().zip(&full) {
                    assert!((n.distance - f.distance).abs() < 1e-6);
                }
            }
        }
    }
    let own = s
        .nearest_ids(&vectors[420], &DrawerFilter::all(), 1)
        .await
        .unwrap();
    assert_eq!(own[0].id, drawers[420].id, "an unindexed row is found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ann_index_above_threshold_meets_the_recall_bar() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_index_threshold(2_000)).await;
    let (drawers, vectors) = seeded(21, 3_000, DIM);
    for (d, v) in drawers.chunks(1_000).zip(vectors.chunks(1_000)) {
        s.upsert(d, v).await.unwrap();
    }
    assert!(!s.has_vector_index().await.unwrap());
    let report = s.optimize().await.unwrap();
    assert!(report.built_vector_index);
    assert!(s.has_vector_index().await.unwrap());
    let reference = MemoryStore::new(DIM);
    reference.upsert(&drawers, &vectors).await.unwrap();
    let queries = unit_vectors(99, 30, DIM);
    let mut recall = 0.0;
    for q in &queries {
        for filter in [DrawerFilter::all(), DrawerFilter::wing("wing_code")] {
            let got = s.query(q, &filter, 10).await.unwrap();
            let want = reference.query(q, &filter, 10).await.unwrap();
            assert_eq!(got.len(), 10);
            assert!(got.iter().all(|n| filter.matches(&n.drawer)));
            let exact = reference.query(q, &filter, 3_000).await.unwrap();
            for n in &got {
                let truth = exact
                    .iter()
                    .find(|e| e.drawer.id == n.drawer.id)
                    .unwrap()
                    .distance;
                assert!(
                    (n.distance - truth).abs() < 1e-4,
                    "re-ranked distances are exact"
                );
            }
            recall += got
                .iter()
                .filter(|n| want.iter().any(|w| w.drawer.id == n.drawer.id))
                .count() as f64
                / 10.0;
        }
    }
    let recall = recall / (queries.len() * 2) as f64;
    assert!(recall >= 0.95, "recall@10 = {recall}");
    // Hybrid search asks each channel for 40+ candidates: more than the HNSW search breadth
    // alone, times the re-rank factor.
    for filter in [DrawerFilter::all(), DrawerFilter::wing("wing_code")] {
        let got = s.query(&queries[0], &filter, 120).await.unwrap();
        let want = reference.query(&queries[0], &filter, 120).await.unwrap();
        assert_eq!(got.len(), want.len());
        let overlap = got
            .iter()
            .filter(|n| want.iter().any(|w| w.drawer.id == n.drawer.id))
            .count();
        assert!(
            overlap * 100 >= want.len() * 90,
            "recall@120 = {overlap}/{}",
            want.len()
        );
    }
    // Rows written after the index are still found.
    let fresh = unit_vectors(5, 1, DIM).remove(0);
    s.upsert(
        &[drawer("fresh", "wing_code", "auth", "new")],
        std::slice::from_ref(&fresh),
    )
    .await
    .unwrap();
    assert_eq!(
        s.query(&fresh, &DrawerFilter::all(), 1).await.unwrap()[0]
            .drawer
            .id,
        "fresh"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_writes_are_compacted() {
    let dir = tempfile::tempdir().unwrap();
    let (drawers, vectors) = seeded(22, 40, DIM);
    // Eight writers (as eight short-lived processes) of five drawers each, one write per
    // drawer: none writes often enough for its background check, which would compact them.
    for (batch, chunk) in drawers.chunks(5).zip(vectors.chunks(5)) {
        let writer = store(dir.path(), |o| o.with_compaction_fragments(1_000)).await;
        upsert_one_by_one(&writer, batch, chunk).await;
    }
    let s = store(dir.path(), |o| o.with_compaction_fragments(1_000)).await;
    let before = s.fragment_count().await.unwrap();
    assert!(before >= 20, "each small write adds a fragment ({before})");
    let report = s.optimize().await.unwrap();
    assert_eq!(report.fragments_before, before);
    assert!(
        report.fragments_after <= 2,
        "compacted to {}",
        report.fragments_after
    );
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 40);
}

/// The table versions on disk (each write commits one).
fn manifests(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("lance/mempalace_drawers.lance/_versions"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".manifest")
        })
        .count()
}

/// Files each drawer in a write of its own, as `add_drawer` does (one version per write).
async fn upsert_one_by_one(s: &LanceStore, drawers: &[Drawer], vectors: &[Vec<f32>]) {
    for (d, v) in drawers.iter().zip(vectors) {
        s.upsert(std::slice::from_ref(d), std::slice::from_ref(v))
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_prunes_versions_only_when_both_old_and_far_back() {
    let (drawers, vectors) = seeded(24, 30, DIM);
    // By default a version is kept for minutes: a fresh history stays whole.
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_compaction_fragments(1_000)).await;
    upsert_one_by_one(&s, &drawers, &vectors).await;
    let before = manifests(dir.path());
    assert!(before >= 30, "one version per write ({before})");
    assert_eq!(s.optimize().await.unwrap().versions_pruned, 0);
    assert!(manifests(dir.path()) >= before);

    // Kept for no time at all, only the newest five (and what maintenance commits after
    // pruning) remain; a reader opened before the pruning still reads every drawer.
    let dir = tempfile::tempdir().unwrap();
    let retention = |o: LanceOptions| {
        o.with_compaction_fragments(1_000)
            .with_version_retention(std::time::Duration::ZERO, 5)
    };
    let s = store(dir.path(), retention).await;
    upsert_one_by_one(&s, &drawers, &vectors).await;
    let reader = store(dir.path(), retention).await;
    assert_eq!(reader.count(&DrawerFilter::all()).await.unwrap(), 30);
    let before = manifests(dir.path());
    let report = s.optimize().await.unwrap();
    let after = manifests(dir.path());
    assert!(
        report.versions_pruned as usize >= before - 5,
        "pruned {} of {before}",
        report.versions_pruned
    );
    assert!((5..=10).contains(&after), "{after} versions left");
    assert_eq!(reader.count(&DrawerFilter::all()).await.unwrap(), 30);
    for (d, v) in drawers.iter().zip(&vectors).step_by(7) {
        let hit = reader.query(v, &DrawerFilter::all(), 1).await.unwrap();
        assert_eq!(hit[0].drawer.id, d.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_prunes_its_history_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| {
        o.with_version_retention(std::time::Duration::ZERO, 5)
    })
    .await;
    let (drawers, vectors) = seeded(25, 64, DIM);
    // No optimize, no settle: only the background checks after every 8th write.
    upsert_one_by_one(&s, &drawers, &vectors).await;
    until("prune the old versions", || async {
        manifests(dir.path()) <= 30
    })
    .await;
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopen_after_restart_and_dimension_check() {
    let dir = tempfile::tempdir().unwrap();
    let (drawers, vectors) = seeded(23, 10, DIM);
    {
        let s = store(dir.path(), |o| o).await;
        assert!(
            !dir.path().join("lance").exists(),
            "opening creates nothing"
        );
        s.upsert(&drawers, &vectors).await.unwrap();
    }
    let s = store(dir.path(), |o| o).await;
    assert!(s.exists().await.unwrap());
    assert_eq!(
        s.get(&[drawers[3].id.clone()]).await.unwrap(),
        vec![drawers[3].clone()]
    );
    match LanceStore::open(LanceOptions::new(dir.path().join("lance"), 768)).await {
        Err(PalaceError::DimensionMismatch {
            expected,
            actual,
            context,
        }) => {
            assert_eq!((expected, actual), (384, 768));
            assert!(
                context.contains("384") && context.contains("768"),
                "{context}"
            );
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a 384-d table must not open as 768-d"),
    }
}

/// The child half of `acknowledged_writes_survive_kill`: writes drawers one by one, printing
/// each id after its upsert returned. Runs only when the parent sets the folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process for acknowledged_writes_survive_kill"]
async fn child_writer() {
    let Ok(dir) = std::env::var("MEMPALACE_CHILD_DIR") else {
        return;
    };
    let s = store(std::path::Path::new(&dir), |o| o).await;
    let vectors = unit_vectors(24, 10_000, DIM);
    for (i, v) in vectors.iter().enumerate() {
        let d = drawer(
            &format!("k{i:05}"),
            "wing",
            "room",
            &format!("kill test {i}"),
        );
        s.upsert(&[d], std::slice::from_ref(v)).await.unwrap();
        println!("ACK k{i:05}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "child_writer",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("MEMPALACE_CHILD_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut acked = Vec::new();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        while let Some(Ok(line)) = lines.next() {
            if let Some(id) = line.strip_prefix("ACK ") {
                acked.push(id.to_string());
                if acked.len() >= 15 + round * 7 {
                    break;
                }
            }
        }
        let wanted = 15 + round * 7;
        assert_eq!(
            acked.len(),
            wanted,
            "round {round}: the child must acknowledge {wanted} writes before it is killed \
             (did it start?)"
        );
        // SIGKILL: no destructor, no flush.
        child.kill().unwrap();
        child.wait().unwrap();
        let s = store(dir.path(), |o| o).await;
        let found = s.get(&acked).await.unwrap();
        assert_eq!(
            found.len(),
            acked.len(),
            "round {round}: every acknowledged write survives"
        );
        assert!(s.count(&DrawerFilter::all()).await.unwrap() >= acked.len() as u64);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handles_filing_the_same_new_ids_store_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = store(dir.path(), |o| o).await;
    a.create_if_missing().await.unwrap();
    // A second handle has its own connection, as another process would.
    let b = store(dir.path(), |o| o).await;
    let (drawers, vectors) = seeded(25, 20, DIM);
    for round in 0..5 {
        let d = drawers[round * 4..round * 4 + 4].to_vec();
        let v = vectors[round * 4..round * 4 + 4].to_vec();
        let (a2, b2, d2, v2) = (a.clone(), b.clone(), d.clone(), v.clone());
        let t1 = tokio::spawn(async move { a2.upsert(&d2, &v2).await });
        let t2 = tokio::spawn(async move { b2.upsert(&d, &v).await });
        t1.await.unwrap().unwrap();
        t2.await.unwrap().unwrap();
    }
    assert_eq!(
        a.count(&DrawerFilter::all()).await.unwrap(),
        20,
        "no id stored twice"
    );
    assert_eq!(b.count(&DrawerFilter::all()).await.unwrap(), 20);
}

/// Makes the drawers table as an earlier release did: without the columns added since
/// (`authored_at` / `conversation` unless `dated`; `entities` always), holding one drawer
/// `old` in `w/r`.
async fn earlier_release_table(folder: &std::path::Path, dated: bool) {
    use std::sync::Arc;

    use arrow_array::{
        FixedSizeListArray, Float32Array, RecordBatch, RecordBatchIterator, StringArray,
        UInt32Array,
    };
    use arrow_schema::{DataType, Field, Schema};

    let text = |v: &str| Arc::new(StringArray::from(vec![v])) as arrow_array::ArrayRef;
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let mut fields = vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Utf8, false),
        Field::new("wing", DataType::Utf8, false),
        Field::new("room", DataType::Utf8, false),
        Field::new("source_file", DataType::Utf8, false),
        Field::new("chunk_index", DataType::UInt32, false),
        Field::new("added_by", DataType::Utf8, false),
        Field::new("filed_at", DataType::Utf8, false),
        Field::new(
            "vector",
            DataType::FixedSizeList(item.clone(), DIM as i32),
            false,
        ),
    ];
    let vector = unit_vectors(40, 1, DIM).remove(0);
    let mut columns = vec![
        text("old"),
        text("filed before conversations existed"),
        text("w"),
        text("r"),
        text("/a.md"),
        Arc::new(UInt32Array::from(vec![0])) as arrow_array::ArrayRef,
        text("mine"),
        text("2025-06-01T00:00:00.000000"),
        Arc::new(
            FixedSizeListArray::try_new(
                item,
                DIM as i32,
                Arc::new(Float32Array::from(vector)),
                None,
            )
            .unwrap(),
        ),
    ];
    if dated {
        fields.push(Field::new("authored_at", DataType::Utf8, true));
        fields.push(Field::new("conversation", DataType::Utf8, true));
        columns.push(text("2025-05-01T00:00:00.000000"));
        columns.push(Arc::new(StringArray::from(vec![None::<&str>])));
    }
    let old = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(Arc::clone(&old), columns).unwrap();
    let db = lancedb::connect(folder.to_str().unwrap())
        .execute()
        .await
        .unwrap();
    db.create_table(
        LanceOptions::DEFAULT_TABLE,
        Box::new(RecordBatchIterator::new(vec![Ok(batch)], old))
            as Box<dyn arrow_array::RecordBatchReader + Send>,
    )
    .execute()
    .await
    .unwrap();
}

/// A table of the release before drawers carried names (dated columns, no `entities`) reads
/// as before, keeps its dates, and its first write adds the column and stores names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_from_before_drawer_names_gains_the_entities_column_on_its_first_write() {
    use mempalace_core::Page;

    let dir = tempfile::tempdir().unwrap();
    earlier_release_table(&dir.path().join("lance"), true).await;
    let s = store(dir.path(), |o| o).await;
    let listed = s.list(&DrawerFilter::all(), Page::first(10)).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].metadata.entities.is_empty());
    assert_eq!(
        listed[0].metadata.authored_at.as_deref(),
        Some("2025-05-01T00:00:00.000000")
    );
    let mut new = drawer("new", "w", "r", "Aya met Lumi");
    new.metadata.entities = vec!["Aya".into(), "Lumi".into()];
    s.upsert(std::slice::from_ref(&new), &unit_vectors(41, 1, DIM))
        .await
        .unwrap();
    let got = s.get(&["new".into(), "old".into()]).await.unwrap();
    assert_eq!(got[0], new);
    assert_eq!(got[1].metadata.authored_at, listed[0].metadata.authored_at);
    assert!(got[1].metadata.entities.is_empty());
    let again = store(dir.path(), |o| o).await;
    assert_eq!(again.get(&["new".into()]).await.unwrap()[0], new);
}

/// A table made before conversation mining (no `authored_at` / `conversation` columns) reads
/// as before, time filters date it by `filed_at`, and its first write adds the columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_from_before_conversation_mining_gains_the_dated_columns_on_its_first_write() {
    use mempalace_core::{ConversationRef, Page};

    let dir = tempfile::tempdir().unwrap();
    earlier_release_table(&dir.path().join("lance"), false).await;
    let s = store(dir.path(), |o| o).await;
    let listed = s.list(&DrawerFilter::all(), Page::first(10)).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].metadata.authored_at, None);
    let june = DrawerFilter::all().filed_between(Some("2025-06-01T00:00:00".into()), None);
    assert_eq!(s.count(&june).await.unwrap(), 1, "dated by filed_at");

    let mut new = drawer("new", "w", "r", "said in January");
    new.metadata.authored_at = Some("2025-01-10T09:00:00".into());
    new.metadata.conversation = Some(ConversationRef {
        id: "c".into(),
        title: None,
        speakers: vec!["user".into()],
        first_turn: 0,
        last_turn: 0,
        authored_until: None,
        extract: Default::default(),
    });
    let v = unit_vectors(41, 1, DIM);
    s.upsert(std::slice::from_ref(&new), &v).await.unwrap();
    let got = s.get(&["new".into(), "old".into()]).await.unwrap();
    assert_eq!(got[0], new);
    assert_eq!(got[1].metadata.authored_at, None);
    assert_eq!(
        s.count(&june).await.unwrap(),
        1,
        "the January words are not in June"
    );
    // Another process opening it now finds the columns.
    let again = store(dir.path(), |o| o).await;
    assert_eq!(again.get(&["new".into()]).await.unwrap()[0], new);
}

/// Waits up to a minute for background maintenance to bring about `done`.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut done: impl FnMut() -> F) {
    for _ in 0..600 {
        if done().await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("background maintenance did not {what} within a minute");
}

/// Waits until background maintenance has folded every written row into the indexes.
async fn until_indexed(s: &LanceStore) {
    until("index the new rows", || async {
        s.unindexed_rows().await.unwrap() == 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ann_index_stays_in_few_parts_under_a_stream_of_writes() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_index_threshold(200)).await;
    // The store runs its background check after every 8th write, counting this first one:
    // so the first round has 15 writes and the others 16, and each round's last write is the
    // one whose background check finds more than 1,000 rows the indexes do not cover (each
    // round writes at least 15 × 70) and folds them all in. No write runs during that fold.
    // (The check halfway through a round finds fewer and only compacts the new fragments.)
    let rounds = [15usize, 16, 16];
    let total = 300 + rounds.iter().sum::<usize>() * 70;
    let (drawers, vectors) = seeded(23, total, DIM);
    s.upsert(&drawers[..300], &vectors[..300]).await.unwrap();
    s.optimize().await.unwrap();
    assert_eq!(s.vector_index_parts().await.unwrap(), 1);
    let mut at = 300;
    for (round, writes) in rounds.into_iter().enumerate() {
        for _ in 0..writes {
            s.upsert(&drawers[at..at + 70], &vectors[at..at + 70])
                .await
                .unwrap();
            at += 70;
        }
        until_indexed(&s).await;
        assert_eq!(
            s.vector_index_parts().await.unwrap(),
            2,
            "round {round}: the base and one delta, not a new part per run"
        );
    }
    s.settle().await.unwrap();
    assert_eq!(
        s.vector_index_parts().await.unwrap(),
        1,
        "settling merges the parts"
    );
    assert_eq!(
        s.fragment_count().await.unwrap(),
        1,
        "and the fragments, once the same indexes cover them all"
    );
    let last = drawers.len() - 1;
    let hit = s
        .query(&vectors[last], &DrawerFilter::all(), 1)
        .await
        .unwrap();
    assert_eq!(hit[0].drawer.id, drawers[last].id);
    assert_eq!(
        s.count(&DrawerFilter::all()).await.unwrap(),
        drawers.len() as u64
    );
}

/// Waits until the table has at most `fragments` fragments.
async fn until_fragments_at_most(s: &LanceStore, fragments: usize) {
    until(
        &format!("compact to at most {fragments} fragments"),
        || async { s.fragment_count().await.unwrap() <= fragments },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_drawer_writes_are_merged_in_the_background_without_rebuilding_the_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_index_threshold(200)).await;
    let (drawers, vectors) = seeded(24, 315, DIM);
    s.upsert(&drawers[..300], &vectors[..300]).await.unwrap();
    s.optimize().await.unwrap();
    let settled = s.fragment_count().await.unwrap();
    // Fifteen one-drawer appends after the first write: the 8th and 16th writes run the
    // background check, the second after the last append.
    for at in 300..315 {
        s.insert_new(&drawers[at..at + 1], &vectors[at..at + 1])
            .await
            .unwrap();
    }
    until_fragments_at_most(&s, settled + 1).await;
    assert_eq!(
        s.unindexed_rows().await.unwrap(),
        15,
        "fifteen rows are far below the indexing limit: the indexes are left as they were"
    );
    assert_eq!(s.vector_index_parts().await.unwrap(), 1);
    assert_eq!(s.count(&DrawerFilter::all()).await.unwrap(), 315);
    for at in [300, 307, 314] {
        let hit = s
            .query(&vectors[at], &DrawerFilter::all(), 1)
            .await
            .unwrap();
        assert_eq!(hit[0].drawer.id, drawers[at].id);
        assert_eq!(
            s.get(&[drawers[at].id.clone()]).await.unwrap()[0],
            drawers[at]
        );
    }
}

/// Room counts after appends made here are carried forward, not counted again; they must
/// still equal a fresh count, including when another handle (as another process would)
/// appended in between, and with writes in a room the counts had not seen yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_counts_after_appends_here_and_elsewhere_equal_a_fresh_count() {
    let dir = tempfile::tempdir().unwrap();
    let a = store(dir.path(), |o| o).await;
    let b = store(dir.path(), |o| o).await;
    let (drawers, vectors) = seeded(31, 40, DIM);
    a.upsert(&drawers[..10], &vectors[..10]).await.unwrap();
    let all = DrawerFilter::all();
    let mut expected_total = 10;
    for (round, i) in (10..40).step_by(3).enumerate() {
        // Remembered for this version, then a write: by this handle, or (every third
        // round) by the other one, which this handle's cache cannot follow.
        a.room_counts(&all).await.unwrap();
        let writer = if round % 3 == 2 { &b } else { &a };
        let mut batch = drawers[i..i + 3].to_vec();
        batch[0].metadata.room = format!("new_room_{round}");
        // The same id twice in one write is stored once (the last wins).
        batch.push(batch[2].clone());
        let mut batch_vectors = vectors[i..i + 3].to_vec();
        batch_vectors.push(vectors[i + 2].clone());
        writer.insert_new(&batch, &batch_vectors).await.unwrap();
        expected_total += 3;
        let fresh = store(dir.path(), |o| o).await;
        let counted = fresh.room_counts(&all).await.unwrap();
        assert_eq!(a.room_counts(&all).await.unwrap(), counted, "round {round}");
        assert_eq!(
            counted.iter().map(|c| c.count).sum::<u64>(),
            expected_total,
            "round {round}"
        );
        let wing = &drawers[i].metadata.wing;
        assert_eq!(
            a.room_counts(&DrawerFilter::wing(wing)).await.unwrap(),
            fresh.room_counts(&DrawerFilter::wing(wing)).await.unwrap(),
            "round {round}: a filtered count is counted, not carried"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_names_each_index_and_the_rows_it_does_not_cover() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path(), |o| o.with_index_threshold(600)).await;
    let empty = s.health().await.unwrap();
    assert_eq!(
        (empty.backend.as_str(), empty.rows, empty.indexes.len()),
        ("lancedb", 0, 0)
    );
    let (drawers, vectors) = seeded(23, 700, DIM);
    s.upsert(&drawers, &vectors).await.unwrap();
    s.settle().await.unwrap();
    let settled = s.health().await.unwrap();
    assert_eq!(settled.rows, 700);
    let kinds: Vec<&str> = settled.indexes.iter().map(|i| i.kind.as_str()).collect();
    assert!(
        kinds.contains(&"vector") && kinds.contains(&"full_text"),
        "{kinds:?}"
    );
    assert!(
        settled
            .indexes
            .iter()
            .all(|i| i.unindexed_rows == 0 && i.parts >= 1),
        "{settled:?}"
    );
    assert!(settled.fragments.unwrap() >= 1);
    // Rows written since the last maintenance are reported as not covered yet.
    let more: Vec<Drawer> = (0..50)
        .map(|i| drawer(&format!("late{i:03}"), "wing_a", "room_a", "a late drawer"))
        .collect();
    s.upsert(&more, &unit_vectors(24, 50, DIM)).await.unwrap();
    let lagging = s.health().await.unwrap();
    assert_eq!(lagging.rows, 750);
    assert!(
        lagging.indexes.iter().any(|i| i.unindexed_rows == 50),
        "{lagging:?}"
    );
}
