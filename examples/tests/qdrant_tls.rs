//! TLS to Qdrant: a Qdrant server of the test's own serving a self-signed certificate (the
//! binary `../shared/qdrant/start.sh` unpacks). An `https://` URL is verified: with the
//! certificate trusted (`SSL_CERT_FILE`, which the Qdrant client's system trust store reads)
//! the palace is made and used; without it the server is refused, saying why. SKIPPED without
//! `QDRANT_URL` or the unpacked binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mempalace_conformance::live_service::{qdrant_url, skips_fail};

/// The Qdrant binary `../shared/qdrant/start.sh` unpacks (it has run where `QDRANT_URL` is
/// set by the test script).
fn qdrant_binary() -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    let bin = cache.join("mempalace/qdrant-1.18.3/qdrant");
    bin.is_file().then_some(bin)
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The server, killed when dropped.
struct TlsQdrant(Child);

impl Drop for TlsQdrant {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts Qdrant with TLS on both ports, its certificate and key from `dir`; returns it and
/// its gRPC port once that accepts connections.
fn start_tls_qdrant(bin: &Path, dir: &Path) -> (TlsQdrant, u16) {
    let (http, grpc) = (free_port(), free_port());
    let storage = dir.join("storage");
    std::fs::create_dir_all(&storage).unwrap();
    let child = Command::new(bin)
        .current_dir(&storage)
        .env("QDRANT__STORAGE__STORAGE_PATH", storage.join("data"))
        .env("QDRANT__STORAGE__SNAPSHOTS_PATH", storage.join("snapshots"))
        .env("QDRANT__SERVICE__HOST", "127.0.0.1")
        .env("QDRANT__SERVICE__HTTP_PORT", http.to_string())
        .env("QDRANT__SERVICE__GRPC_PORT", grpc.to_string())
        .env("QDRANT__SERVICE__ENABLE_TLS", "true")
        .env("QDRANT__TLS__CERT", dir.join("cert.pem"))
        .env("QDRANT__TLS__KEY", dir.join("key.pem"))
        .env("QDRANT__TELEMETRY_DISABLED", "true")
        .env("QDRANT__LOG_LEVEL", "WARN")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start qdrant");
    let server = TlsQdrant(child);
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", grpc)).is_ok() {
            return (server, grpc);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the TLS Qdrant did not listen within 20 s");
}

/// `mempalace` on a Qdrant palace at `url`, trusting `ca` when given.
fn mempalace(palace: &Path, url: &str, ca: Option<&Path>, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    command
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .args(["--palace"])
        .arg(palace)
        .args([
            "--backend",
            "qdrant",
            "--qdrant-url",
            url,
            "--collection",
            "mempalace_tls",
        ])
        .args(args);
    if let Some(ca) = ca {
        command.env("SSL_CERT_FILE", ca);
    }
    command.output().expect("run mempalace")
}

#[test]
fn an_https_qdrant_is_verified_and_used_once_trusted() {
    let name = "an_https_qdrant_is_verified_and_used_once_trusted";
    if qdrant_url(name).is_none() {
        return;
    }
    let Some(bin) = qdrant_binary() else {
        let why = format!("SKIPPED {name}: the Qdrant binary of ../shared/qdrant is not unpacked");
        assert!(!skips_fail(), "{why}");
        eprintln!("{why}");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let issued = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    std::fs::write(dir.path().join("cert.pem"), issued.cert.pem()).unwrap();
    std::fs::write(
        dir.path().join("key.pem"),
        issued.signing_key.serialize_pem(),
    )
    .unwrap();
    let (_server, grpc) = start_tls_qdrant(&bin, dir.path());
    let url = format!("https://localhost:{grpc}");
    let palace = dir.path().join("palace");
    let ca = dir.path().join("cert.pem");
    // Trusted: a project is mined into the palace on the TLS server (the server may still be
    // starting: the first tries can fail) and status counts its drawers.
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("notes.md"),
        "The fleet talks to Qdrant over TLS, with the server's certificate verified.",
    )
    .unwrap();
    let mut mined = None;
    for _ in 0..50 {
        let out = mempalace(
            &palace,
            &url,
            Some(&ca),
            &["mine", project.to_str().unwrap(), "--wing", "tls"],
        );
        if out.status.success() {
            mined = Some(out);
            break;
        }
        mined = Some(out);
        std::thread::sleep(Duration::from_millis(200));
    }
    let mined = mined.unwrap();
    assert!(
        mined.status.success(),
        "the trusted TLS server is used: {}",
        String::from_utf8_lossy(&mined.stderr)
    );
    let status = mempalace(&palace, &url, Some(&ca), &["status", "--json"]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        status["total_drawers"].as_u64().unwrap_or(0) >= 1,
        "{status}"
    );
    // Not trusted: refused, and the error names the certificate check that failed.
    let refused = mempalace(&palace, &url, None, &["status", "--json"]);
    assert!(!refused.status.success(), "an untrusted server is refused");
    let said = String::from_utf8_lossy(&refused.stderr).to_lowercase();
    assert!(said.contains("invalidcertificate(unknownissuer)"), "{said}");
}
