//! Collections a test or bench makes on a shared Qdrant server: named so no other run uses
//! them, deleted afterwards (included with `#[path]`).

#![allow(dead_code)] // each includer uses a part

/// A collection name no other run uses.
pub fn fresh_collection(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// Deletes a run's collection from the Qdrant server at `url` (gone already is fine).
pub async fn drop_collection(url: &str, collection: &str) {
    let admin = qdrant_client::Qdrant::from_url(url)
        .api_key(std::env::var("QDRANT_API_KEY").ok())
        .skip_compatibility_check()
        .build()
        .unwrap();
    let _ = admin.delete_collection(collection).await;
}
