//! The `PalaceLinks` conformance suite against `JsonFileLinks` and the in-process reference
//! `MemoryLinks`.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use mempalace_conformance::palace_links_suite::{LinksFactory, LinksFixture, LinksSeed};
use mempalace_core::palace_links::{MemoryLinks, PalaceLinks};
use mempalace_links_json::JsonFileLinks;
use serde_json::json;

/// Seeds `dir` with 3.11-format files (only the ones the seed has records for).
fn write_seed(dir: &Path, seed: LinksSeed) {
    if !seed.tunnels.is_empty() {
        let text = serde_json::to_string_pretty(&seed.tunnels).unwrap();
        std::fs::write(dir.join("tunnels.json"), text).unwrap();
    }
    if !seed.hallways.is_empty() {
        let doc = json!({"schema_version": 1, "hallways": seed.hallways});
        std::fs::write(
            dir.join("hallways.json"),
            serde_json::to_string_pretty(&doc).unwrap(),
        )
        .unwrap();
    }
}

struct JsonFactory;

#[async_trait]
impl LinksFactory for JsonFactory {
    async fn create(&self, seed: LinksSeed) -> LinksFixture {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        write_seed(&dir, seed);
        let links: Arc<dyn PalaceLinks> = Arc::new(JsonFileLinks::new(&dir));
        LinksFixture::new(links, move || {
            Arc::new(JsonFileLinks::new(&dir)) as Arc<dyn PalaceLinks>
        })
        .with_guard(tmp)
    }
}

struct MemoryFactory;

#[async_trait]
impl LinksFactory for MemoryFactory {
    async fn create(&self, seed: LinksSeed) -> LinksFixture {
        let links: Arc<dyn PalaceLinks> = Arc::new(
            MemoryLinks::with_hallway_records(seed.hallways).with_tunnel_records(seed.tunnels),
        );
        let shared = Arc::clone(&links);
        LinksFixture::new(links, move || Arc::clone(&shared))
    }
}

mod json_file_links {
    use super::JsonFactory;
    mempalace_conformance::palace_links_conformance!(JsonFactory);
}

mod memory_links {
    use super::MemoryFactory;
    mempalace_conformance::palace_links_conformance!(MemoryFactory);
}
