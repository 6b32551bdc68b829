//! The README's fleet recipe, run as written ("Running a fleet"): with `QDRANT_URL` and
//! `MEMPALACE_KG_POSTGRES_URL` in the environment, the first command names the backend and
//! creates the palace; every later command, and every host given the palace's
//! `palace.json`, uses what was recorded. SKIPPED without a Qdrant and a PostgreSQL server.

use std::path::Path;
use std::process::Output;

use mempalace_conformance::live_service::{postgres_url, qdrant_url};
use serde_json::Value;

/// `mempalace --palace <palace> <args>` with the fleet's two servers in the environment.
fn mempalace(palace: &Path, qdrant: &str, postgres: &str, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .env("QDRANT_URL", qdrant)
        .env("MEMPALACE_KG_POSTGRES_URL", postgres)
        .env_remove("MEMPALACE_KG_POSTGRES_URL_FILE")
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap()
}

fn json(palace: &Path, qdrant: &str, postgres: &str, args: &[&str]) -> Value {
    let out = mempalace(palace, qdrant, postgres, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_fleet_recipe_makes_one_palace_every_host_shares() {
    let name = "the_readmes_fleet_recipe_makes_one_palace_every_host_shares";
    let (Some(qdrant), Some(postgres)) = (qdrant_url(name), postgres_url(name)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let host1 = dir.path().join("host1/srv/palace");
    let host2 = dir.path().join("host2/srv/palace");

    // mempalace --palace /srv/palace --backend qdrant kg add Fleet starts today   # creates it
    let out = mempalace(
        &host1,
        &qdrant,
        &postgres,
        &[
            "--backend",
            "qdrant",
            "kg",
            "add",
            "Fleet",
            "starts",
            "today",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The creating command recorded what it was told.
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(host1.join("palace.json")).unwrap()).unwrap();
    assert_eq!(config["backend"], "qdrant", "{config}");
    assert_eq!(config["knowledge_graph"], "postgres", "{config}");
    let collection = config["table"].as_str().unwrap().to_string();
    assert!(collection.starts_with("mempalace_"), "{config}");

    // mempalace --palace /srv/palace status       (no --backend: the record decides)
    let status = json(&host1, &qdrant, &postgres, &["status", "--json"]);
    assert_eq!(status["total_drawers"], 0, "{status}");
    assert!(status.get("error").is_none(), "{status}");
    let recorded_again: Value =
        serde_json::from_str(&std::fs::read_to_string(host1.join("palace.json")).unwrap()).unwrap();
    assert_eq!(recorded_again, config, "status rewrote palace.json");

    // scp /srv/palace/palace.json host2:/srv/palace/
    std::fs::create_dir_all(&host2).unwrap();
    std::fs::copy(host1.join("palace.json"), host2.join("palace.json")).unwrap();
    let facts = json(
        &host2,
        &qdrant,
        &postgres,
        &["kg", "query", "Fleet", "--json"],
    );
    assert!(facts.to_string().contains("today"), "{facts}");
    // A drawer filed on host 2 is seen on host 1: one collection, not a LanceDB each.
    let project = dir.path().join("notes");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("fleet.md"),
        "# Fleet\n\nEvery host of the fleet files into one Qdrant collection.\n",
    )
    .unwrap();
    let mined = json(
        &host2,
        &qdrant,
        &postgres,
        &["mine", project.to_str().unwrap(), "--json"],
    );
    assert!(mined["drawers_filed"].as_u64().unwrap() >= 1, "{mined}");
    let status = json(&host1, &qdrant, &postgres, &["status", "--json"]);
    assert_eq!(status["total_drawers"], mined["drawers_filed"], "{status}");
    assert!(!host1.join("lance").exists() && !host2.join("lance").exists());

    let admin = qdrant_client::Qdrant::from_url(&qdrant)
        .api_key(std::env::var("QDRANT_API_KEY").ok())
        .skip_compatibility_check()
        .build()
        .unwrap();
    admin.delete_collection(collection.as_str()).await.unwrap();
}
