//! What only the file-backed index shows: reads create nothing, and independent handles (other
//! processes' views) share one file.

use mempalace_closets_sqlite::{CLOSETS_FILE, SqliteClosets};
use mempalace_conformance::closet_index_suite::closet;
use mempalace_core::closets::{ClosetIndex, ClosetScope};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_a_palace_without_closets_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let index = SqliteClosets::in_palace(tmp.path());
    assert_eq!(index.count().await.unwrap(), 0);
    let words = vec!["tomatoes".to_string()];
    assert!(
        index
            .containing_any(&words, &ClosetScope::default(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(index.delete_for_sources(&words).await.unwrap(), 0);
    assert!(!tmp.path().join(CLOSETS_FILE).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn independent_handles_share_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let reader = SqliteClosets::in_palace(tmp.path());
    assert_eq!(reader.count().await.unwrap(), 0, "before the file exists");
    let writer = SqliteClosets::in_palace(tmp.path());
    writer
        .upsert(&[closet("c1", "garden notes|Tomatoes", "/a.md")])
        .await
        .unwrap();
    assert_eq!(
        reader.count().await.unwrap(),
        1,
        "the reader sees the new file"
    );
    let words = vec!["tomatoes".to_string()];
    let found = reader
        .containing_any(&words, &ClosetScope::default(), 10)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    writer
        .delete_for_sources(&["/a.md".to_string()])
        .await
        .unwrap();
    assert_eq!(reader.count().await.unwrap(), 0);
}
