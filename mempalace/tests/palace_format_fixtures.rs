//! Palaces written by earlier releases open in this one: every committed fixture
//! (`tests/fixtures/palace_format_N`, made by `scripts/make-format-fixture.sh` in the release
//! that wrote format N) opens, answers, exports what it held, takes new writes, and has its
//! `palace.json` brought to this release's format. A palace of a newer format is refused.

mod support;

use std::path::{Path, PathBuf};

use mempalace_conformance::folders::copy_dir;
use support::fixtures_dir;

use mempalace::core::palace_export::{ExportCounts, ExportOptions};
use mempalace::core::{Direction, NewDrawer};
use mempalace::{PALACE_FORMAT_VERSION, PalaceBuilder, PalaceConfig};

fn fixtures() -> Vec<(u32, PathBuf)> {
    let dir = fixtures_dir();
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name()?.to_str()?.to_string();
            let format = name.strip_prefix("palace_format_")?.parse().ok()?;
            path.is_dir().then_some((format, path))
        })
        .collect();
    found.sort();
    found
}

async fn check_opens_and_answers(format: u32, fixture: &Path, palace_dir: &Path) {
    let palace = PalaceBuilder::new(palace_dir)
        .open()
        .await
        .unwrap_or_else(|e| panic!("format {format}: {e}"));
    let record = PalaceConfig::load(palace_dir).unwrap().unwrap();
    assert_eq!(
        record.format(),
        PALACE_FORMAT_VERSION,
        "format {format}: upgraded record"
    );

    let expected: ExportCounts = serde_json::from_str(
        &std::fs::read_to_string(fixture.with_extension("expected.json")).unwrap(),
    )
    .unwrap();
    let mut export = Vec::new();
    let counts = palace
        .export(&mut export, &ExportOptions::default())
        .await
        .unwrap();
    assert_eq!(
        counts, expected,
        "format {format}: everything it held is read"
    );

    let hits = palace
        .search("Alice and the project", None, None, 3)
        .await
        .unwrap();
    assert!(
        !serde_json::to_value(&hits).unwrap()["results"]
            .as_array()
            .unwrap()
            .is_empty(),
        "format {format}: search answers"
    );
    let facts = palace
        .kg_query("Alice", None, Direction::Both)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&facts).unwrap()["facts"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "format {format}: Alice's facts, closed and current"
    );
    assert!(!palace.list_tunnels(None).await.unwrap().is_empty());

    palace
        .add_drawer(NewDrawer::new(
            "wing_upgrade",
            "notes",
            "Written by a newer release into an older palace.",
        ))
        .await
        .unwrap_or_else(|e| panic!("format {format}: a write after the upgrade: {e}"));
    drop(palace);
    let reopened = PalaceBuilder::new(palace_dir).open().await.unwrap();
    let mut export = Vec::new();
    let after = reopened
        .export(&mut export, &ExportOptions::default())
        .await
        .unwrap();
    assert_eq!(after.drawers, expected.drawers + 1, "format {format}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_palace_format_fixture_opens_answers_and_takes_writes() {
    let found = fixtures();
    assert!(
        found.iter().any(|(f, _)| *f == PALACE_FORMAT_VERSION),
        "no fixture of this release's format {PALACE_FORMAT_VERSION}: run scripts/make-format-fixture.sh"
    );
    for (format, fixture) in found {
        let dir = tempfile::tempdir().unwrap();
        let palace_dir = dir.path().join("palace");
        copy_dir(&fixture, &palace_dir);
        check_opens_and_answers(format, &fixture, &palace_dir).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_palace_whose_record_has_no_format_is_upgraded_and_a_newer_one_refused() {
    let (_, fixture) = fixtures().pop().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let palace_dir = dir.path().join("palace");
    copy_dir(&fixture, &palace_dir);
    let record_path = palace_dir.join("palace.json");
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record_path).unwrap()).unwrap();
    record.as_object_mut().unwrap().remove("format_version");
    std::fs::write(&record_path, record.to_string()).unwrap();
    assert_eq!(
        PalaceConfig::load(&palace_dir).unwrap().unwrap().format(),
        1
    );
    PalaceBuilder::new(&palace_dir).open().await.unwrap();
    assert_eq!(
        PalaceConfig::load(&palace_dir).unwrap().unwrap().format(),
        PALACE_FORMAT_VERSION
    );

    record["format_version"] = serde_json::json!(PALACE_FORMAT_VERSION + 1);
    std::fs::write(&record_path, record.to_string()).unwrap();
    let err = PalaceBuilder::new(&palace_dir)
        .open()
        .await
        .err()
        .expect("a newer format is refused")
        .to_string();
    assert!(err.contains("newer MemPalace"), "{err}");
}
