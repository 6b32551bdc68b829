//! A PostgreSQL cluster of one test's own (`scripts/postgres/start.sh`), for tests that
//! reconfigure or restart the server, which the suite's shared server must not see.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::live_service::skips_fail;

/// A running throwaway cluster; stopped and removed when dropped.
pub struct ThrowawayPostgres {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
    /// The cluster's folder (its data in `data/`).
    pub dir: PathBuf,
}

/// The project's `scripts/postgres` folder.
fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres")
}

/// Whether this process runs as root (the cluster then runs as the `postgres` system user).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

impl ThrowawayPostgres {
    /// Starts one for `test`; `None` (after printing SKIPPED and why, or failing where skips
    /// are not allowed) when PostgreSQL is not installed here.
    pub fn start(test: &str) -> Option<Self> {
        let out = Command::new("bash")
            .arg(scripts().join("start.sh"))
            .output()
            .ok()?;
        if !out.status.success() {
            let why = format!(
                "SKIPPED {test}: cannot start a PostgreSQL cluster of its own: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!skips_fail(), "{why}");
            eprintln!("{why}");
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let value = |key: &str| {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{key}=")))
                .map(str::to_string)
        };
        Some(ThrowawayPostgres {
            url: value("MEMPALACE_TEST_POSTGRES_URL")?,
            dir: value("MEMPALACE_TEST_POSTGRES_DIR")?.into(),
        })
    }

    /// `pg_ctl restart -m fast`: every session ends; the server is back when this returns.
    pub fn restart(&self) {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL's binaries")
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .max()
            .expect("a PostgreSQL version");
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin.join("pg_ctl"));
            c
        } else {
            Command::new(bin.join("pg_ctl"))
        };
        let data = self.dir.join("data");
        let status = command
            .arg("-D")
            .arg(&data)
            .args(["-m", "fast", "-w", "restart"])
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run pg_ctl");
        assert!(status.success(), "pg_ctl restart");
    }

    /// Gives `path` to the cluster's system user, readable by it alone (a key file the server
    /// is to read).
    pub fn hand_over(&self, path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .arg("postgres:")
                .arg(path)
                .status()
                .unwrap();
            assert!(ok.success(), "chown {}", path.display());
        }
    }
}

impl Drop for ThrowawayPostgres {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(scripts().join("stop.sh"))
            .env("MEMPALACE_TEST_POSTGRES_DIR", &self.dir)
            .status();
    }
}
