#![allow(dead_code)] // each test binary uses a part
//! Helpers shared by this crate's integration tests.

use std::sync::atomic::{AtomicU64, Ordering};

use mempalace_kg_postgres::SchemaName;

/// A schema name no other test (of this run or an earlier one on the same server) uses.
pub fn fresh_schema(prefix: &str) -> SchemaName {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    SchemaName::new(&format!("{prefix}_{}_{nanos}_{n}", std::process::id())).unwrap()
}

/// A PostgreSQL cluster of one test's own (`scripts/postgres/start.sh`), stopped and removed
/// when dropped: for tests that reconfigure or restart the server.
pub struct OwnCluster {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
    /// The cluster's folder (its data in `data/`).
    pub dir: std::path::PathBuf,
}

impl OwnCluster {
    /// Starts one; `None` (after saying why) when PostgreSQL is not installed here.
    pub fn start(test: &str) -> Option<Self> {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres/start.sh");
        let out = std::process::Command::new("bash")
            .arg(script)
            .output()
            .ok()?;
        if !out.status.success() {
            let why = format!(
                "SKIPPED {test}: cannot start a PostgreSQL cluster: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!mempalace_conformance::live_service::skips_fail(), "{why}");
            eprintln!("{why}");
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let value = |key: &str| {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{key}=")))
                .map(str::to_string)
        };
        Some(OwnCluster {
            url: value("MEMPALACE_TEST_POSTGRES_URL")?,
            dir: value("MEMPALACE_TEST_POSTGRES_DIR")?.into(),
        })
    }

    /// Gives `path` to the cluster's system user (when the tests run as root, the server runs
    /// as `postgres`), readable by it alone.
    pub fn hand_over(&self, path: &std::path::Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        if root {
            let ok = std::process::Command::new("chown")
                .arg("postgres:")
                .arg(path)
                .status()
                .unwrap();
            assert!(ok.success(), "chown {}", path.display());
        }
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres/stop.sh");
        let _ = std::process::Command::new("bash")
            .arg(script)
            .env("MEMPALACE_TEST_POSTGRES_DIR", &self.dir)
            .status();
    }
}
