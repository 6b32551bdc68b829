//! What only the file store shows: 3.11's own files read back with the same ids, the files it
//! writes, corrupt files, and reads that create nothing.

use std::path::Path;

use mempalace_core::PalaceError;
use mempalace_core::palace_links::{NewTunnel, PalaceLinks, canonical_tunnel_id};
use mempalace_links_json::JsonFileLinks;
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A temp folder holding copies of the files 3.11 wrote.
fn palace_from_311() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["tunnels.json", "hallways.json"] {
        std::fs::copy(Path::new(FIXTURES).join(name), tmp.path().join(name)).unwrap();
    }
    tmp
}

#[tokio::test]
async fn reads_files_written_by_311_with_the_same_ids() {
    let tmp = palace_from_311();
    let links = JsonFileLinks::new(tmp.path());
    let tunnels = links.list_tunnels().await.unwrap();
    let ids: Vec<&str> = tunnels.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        ["31639cdab7ed3839", "0d8790be3647d6eb", "eb4e7d1b0cdb8c73"]
    );
    for t in &tunnels {
        assert_eq!(
            t.id,
            canonical_tunnel_id(
                &t.source.wing,
                &t.source.room,
                &t.target.wing,
                &t.target.room
            )
        );
    }
    // Every record reads back field for field, nothing lost or added.
    let stored = fixture("tunnels.json");
    assert_eq!(serde_json::to_value(&tunnels).unwrap(), stored);
    assert!(tunnels[0].updated_at.is_some());
    assert_eq!(tunnels[1].access_count, Some(1));
    assert_eq!(tunnels[1].strength, Some(1.05));
    assert_eq!(tunnels[2].kind, "topic");

    let hallways = links.list_hallways(None).await.unwrap();
    assert_eq!(serde_json::to_value(&hallways).unwrap(), stored_hallways());
    assert_eq!(
        links.list_hallways(Some("wing_user")).await.unwrap().len(),
        2
    );
}

fn stored_hallways() -> Value {
    fixture("hallways.json")["hallways"].clone()
}

#[tokio::test]
async fn rewrites_keep_311_records_and_layout() {
    let tmp = palace_from_311();
    let links = JsonFileLinks::new(tmp.path());
    let original = fixture("tunnels.json");
    // Re-creating 3.11's A↔B tunnel keeps its created_at; a new tunnel is appended.
    let again = links
        .upsert_tunnel(NewTunnel::new("wing_code", "auth", "wing_team", "auth").with_label("z"))
        .await
        .unwrap();
    assert_eq!(again.id, "31639cdab7ed3839");
    assert_eq!(
        again.created_at,
        original[0]["created_at"].as_str().unwrap()
    );
    links
        .upsert_tunnel(NewTunnel::new("wing_new", "r", "wing_code", "auth"))
        .await
        .unwrap();
    let written = read_json(&tmp.path().join("tunnels.json"));
    let list = written
        .as_array()
        .expect("tunnels.json stays a top-level list");
    assert_eq!(list.len(), 4);
    assert_eq!(list[1], original[1]);
    assert_eq!(list[2], original[2]);
    assert_eq!(list[0]["label"], "z");

    assert!(
        links
            .delete_hallway("hallway_wing_code_Parser.c_lexer_6887845f")
            .await
            .unwrap()
    );
    let doc = read_json(&tmp.path().join("hallways.json"));
    assert_eq!(doc["schema_version"], 1);
    let mut expected = stored_hallways().as_array().unwrap().clone();
    expected.remove(1);
    assert_eq!(doc["hallways"], Value::Array(expected));
    // No temp files are left behind.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock") && !n.ends_with(".waiting"))
        .collect();
    names.sort();
    assert_eq!(names, ["hallways.json", "tunnels.json"]);
}

#[tokio::test]
async fn reads_of_an_empty_folder_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("palace");
    let links = JsonFileLinks::new(&dir);
    assert!(links.list_tunnels().await.unwrap().is_empty());
    assert!(links.list_hallways(None).await.unwrap().is_empty());
    assert_eq!(links.record_traversals(&[String::new()]).await.unwrap(), 0);
    assert!(links.delete_tunnel("").await.is_err());
    assert!(!dir.exists(), "reads created {}", dir.display());
    assert!(!links.delete_tunnel("x").await.unwrap());
    assert!(
        !dir.join("tunnels.json").exists(),
        "a no-op delete writes no file"
    );
    links
        .upsert_tunnel(NewTunnel::new("a", "r", "b", "r"))
        .await
        .unwrap();
    assert_eq!(
        read_json(&dir.join("tunnels.json"))
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

fn is_corrupt_error(err: &PalaceError) -> bool {
    matches!(err, PalaceError::Store { message, .. } if message.contains("not a valid MemPalace links file"))
}

#[tokio::test]
async fn corrupt_files_are_errors_and_are_never_emptied() {
    let tmp = tempfile::tempdir().unwrap();
    let links = JsonFileLinks::new(tmp.path());
    for (name, text) in [
        ("tunnels.json", "[{\"id\": \"a\"},"),
        ("tunnels.json", "{\"tunnels\": []}"),
        ("hallways.json", "{\"hallways\": [1,"),
        ("hallways.json", "{\"schema_version\": 1}"),
        ("hallways.json", "42"),
    ] {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        if name == "tunnels.json" {
            assert!(is_corrupt_error(&links.list_tunnels().await.unwrap_err()));
            let err = links
                .upsert_tunnel(NewTunnel::new("a", "r", "b", "r"))
                .await
                .unwrap_err();
            assert!(is_corrupt_error(&err), "{err}");
            assert!(is_corrupt_error(
                &links.delete_tunnel("a").await.unwrap_err()
            ));
            assert!(is_corrupt_error(
                &links.record_traversals(&["a".into()]).await.unwrap_err()
            ));
        } else {
            assert!(is_corrupt_error(
                &links.list_hallways(None).await.unwrap_err()
            ));
            assert!(is_corrupt_error(
                &links.delete_hallway("a").await.unwrap_err()
            ));
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "{name} was rewritten"
        );
        std::fs::remove_file(&path).unwrap();
    }
}

#[tokio::test]
async fn older_hallway_layouts_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let links = JsonFileLinks::new(tmp.path());
    let path = tmp.path().join("hallways.json");
    std::fs::write(&path, r#"{"schema_version": 1, "hallways": null}"#).unwrap();
    assert!(links.list_hallways(None).await.unwrap().is_empty());
    let record = json!({"id": "h1", "wing": "w", "entity_a": "a", "entity_b": "b", "co_occurrence_count": 3});
    std::fs::write(&path, serde_json::to_string(&json!([record])).unwrap()).unwrap();
    assert_eq!(links.list_hallways(Some("w")).await.unwrap()[0].id, "h1");
    assert!(links.delete_hallway("h1").await.unwrap());
    // Rewritten in 3.11's current layout.
    assert_eq!(
        read_json(&path),
        json!({"schema_version": 1, "hallways": []})
    );
}

/// Writers on separate threads, each with its own runtime and its own `JsonFileLinks` (as
/// separate processes would be), serialise through the file lock: every tunnel lands.
#[test]
fn writers_on_separate_runtimes_all_land() {
    let tmp = tempfile::tempdir().unwrap();
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let dir = tmp.path().to_path_buf();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let links = JsonFileLinks::new(&dir);
                    for i in 0..15 {
                        links
                            .upsert_tunnel(NewTunnel::new(
                                format!("w{w}"),
                                format!("r{i}"),
                                "hub",
                                "r",
                            ))
                            .await
                            .unwrap();
                    }
                })
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let tunnels = rt
        .block_on(JsonFileLinks::new(tmp.path()).list_tunnels())
        .unwrap();
    assert_eq!(tunnels.len(), 60);
}
