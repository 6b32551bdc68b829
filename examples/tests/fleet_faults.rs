//! A fleet under faults (real `mempalace mcp` processes, Qdrant and PostgreSQL servers): two
//! hosts file their own memories and the same shared ones while
//! - one host's server is killed with SIGKILL mid-burst,
//! - PostgreSQL restarts (a cluster of the test's own),
//! - Qdrant restarts (a server of the test's own, from `../shared/qdrant`),
//! - one host's network to PostgreSQL is cut (its connections go through a proxy the test
//!   stops),
//!
//! and afterwards every acknowledged memory is in the palace, none is there twice, a failed
//! call said what failed, and the hosts that were not cut off went on. SKIPPED without the
//! servers (a failure where `MEMPALACE_REQUIRE_LIVE_SERVICES=1`).

#[path = "support/fleet_palace.rs"]
mod fleet_palace;
#[path = "support/palace_processes.rs"]
mod palace_processes;
#[path = "support/qdrant_collections.rs"]
mod qdrant_collections;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::Arc;
use std::time::Duration;

use fleet_palace::{create_args, host_folders, make_fleet_palace, serve_args};
use futures::StreamExt;
use mempalace_conformance::live_service::{postgres_url, qdrant_url, skips_fail};
use mempalace_conformance::throwaway_postgres::ThrowawayPostgres;
use palace_processes::{call, fact, start_server};
use qdrant_collections::{drop_collection, fresh_collection};
use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The pause before each add_drawer of a burst.
const PACE: Duration = Duration::from_millis(120);
/// When a fault strikes, after the bursts start.
const FAULT_AFTER: Duration = Duration::from_millis(900);

/// Memories each host files of its own, and shared ones both file.
const OWN: usize = 24;
const SHARED: usize = 12;

/// One add_drawer and its answer.
#[derive(Debug)]
struct Filed {
    shared: bool,
    content: String,
    answer: Result<Value, String>,
    /// When the answer came.
    answered_at: std::time::Instant,
}

/// Asserts that the fault at `at` fell inside the burst `run` (answers before and after it).
fn landed_mid_burst(run: &[Filed], at: std::time::Instant, what: &str) {
    assert!(
        run.iter().any(|f| f.answered_at < at) && run.iter().any(|f| f.answered_at > at),
        "the {what} fell inside the burst"
    );
}

/// The wing a memory is filed in.
fn wing_of(shared: bool) -> &'static str {
    if shared { "wing_shared" } else { "wing_fleet" }
}

/// Host `h` files its own memories and the shared ones, interleaved, 2 calls in flight,
/// each starting `pace` after the previous one, so that a burst lasts a few seconds and a
/// fault lands in the middle of it.
async fn burst(peer: Peer<RoleClient>, h: usize, pace: Duration) -> Vec<Filed> {
    let jobs: Vec<(bool, String)> = (0..OWN.max(SHARED))
        .flat_map(|i| {
            let own = (i < OWN).then(|| (false, fact(9_000_000 * (h as u64 + 1) + i as u64)));
            let shared = (i < SHARED).then(|| (true, fact(7_000_000 + i as u64)));
            own.into_iter().chain(shared)
        })
        .collect();
    futures::stream::iter(jobs)
        .map(|(shared, content)| {
            let peer = peer.clone();
            async move {
                tokio::time::sleep(pace).await;
                let answer = call(
                    &peer,
                    "mempalace_add_drawer",
                    json!({"wing": wing_of(shared), "room": "facts", "content": content}),
                )
                .await;
                Filed {
                    shared,
                    content,
                    answer,
                    answered_at: std::time::Instant::now(),
                }
            }
        })
        .buffered(2)
        .collect()
        .await
}

/// Every drawer's content in the palace, and how many drawers hold it.
async fn contents(peer: &Peer<RoleClient>) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    let mut offset = 0;
    loop {
        let page = call(
            peer,
            "mempalace_list_drawers",
            json!({"limit": 100, "offset": offset}),
        )
        .await
        .expect("list drawers");
        let drawers = page["drawers"].as_array().cloned().unwrap_or_default();
        if drawers.is_empty() {
            return seen;
        }
        for d in &drawers {
            *seen
                .entry(
                    d["content_preview"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
                .or_insert(0) += 1;
        }
        offset += drawers.len();
    }
}

/// What a faulted run must show: every acknowledged memory present (a refusal names a drawer
/// that exists), nothing twice, each failure said what failed; then re-filing what failed
/// completes the palace (each memory exactly once). Returns how many calls failed.
async fn audit(survivor: &Peer<RoleClient>, runs: &[Vec<Filed>]) -> usize {
    let stored = contents(survivor).await;
    let twice: Vec<&String> = stored
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(c, _)| c)
        .collect();
    assert!(twice.is_empty(), "filed twice: {twice:?}");
    let mut failed = Vec::new();
    for filed in runs.iter().flatten() {
        match &filed.answer {
            Ok(v) if v["success"] == true => {
                assert!(
                    stored.contains_key(&filed.content),
                    "acknowledged but lost: {} ({v})",
                    filed.content
                );
            }
            Ok(v) if v["reason"] == "duplicate" => {
                let named = v["matches"][0]["id"].as_str().unwrap_or_default();
                let found = call(
                    survivor,
                    "mempalace_get_drawer",
                    json!({"drawer_id": named}),
                )
                .await;
                assert!(
                    found.is_ok(),
                    "a refusal named {named}, which is not there: {found:?}"
                );
            }
            Ok(v) => panic!("unexpected answer {v}"),
            Err(e) => {
                let e = e.to_lowercase();
                assert!(
                    [
                        "postgres", "qdrant", "connect", "busy", "closed", "answer", "store"
                    ]
                    .iter()
                    .any(|w| e.contains(w)),
                    "a failure that does not say what failed: {e}"
                );
                failed.push((filed.shared, filed.content.clone()));
            }
        }
    }
    // The writer retries what failed once the fault is over: then everything is there once.
    for (shared, content) in &failed {
        let wing = wing_of(*shared);
        let mut answer = Err(String::new());
        for _ in 0..20 {
            answer = call(
                survivor,
                "mempalace_add_drawer",
                json!({"wing": wing, "room": "facts", "content": content}),
            )
            .await;
            if answer.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        assert!(answer.is_ok(), "re-filing after the fault: {answer:?}");
    }
    let stored = contents(survivor).await;
    for filed in runs.iter().flatten() {
        assert_eq!(stored.get(&filed.content), Some(&1), "{}", filed.content);
    }
    failed.len()
}

/// Two hosts' folders under `dir`, the palace made and shared between them.
fn two_hosts(dir: &Path, qdrant: &str, pg: &str, collection: &str) -> Vec<PathBuf> {
    let hosts = host_folders(dir, 2);
    make_fleet_palace(&hosts, &create_args(qdrant, pg, collection));
    hosts
}

/// A host's `mempalace mcp` killed with SIGKILL mid-burst (holding the fleet lock or about
/// to): the other host's writes all go through, within the lock's bound, and what the killed
/// host had acknowledged is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_killed_mid_burst_loses_nothing_acknowledged() {
    let name = "a_host_killed_mid_burst_loses_nothing_acknowledged";
    let (Some(qdrant), Some(pg)) = (qdrant_url(name), postgres_url(name)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let collection = fresh_collection("mempalace_fault_kill");
    let hosts = two_hosts(dir.path(), &qdrant, &pg, &collection);
    let args = serve_args(&qdrant, &pg);
    let victim = start_server(&hosts[0], &args).await;
    let survivor = start_server(&hosts[1], &args).await;
    let victim_run = tokio::spawn(burst(victim.peer().clone(), 0, PACE));
    let survivor_run = tokio::spawn(burst(survivor.peer().clone(), 1, PACE));
    tokio::time::sleep(FAULT_AFTER).await;
    let killed = StdCommand::new("pkill")
        .args(["-KILL", "-f", &format!("{} mcp", hosts[0].display())])
        .status()
        .unwrap();
    assert!(killed.success(), "the victim was running");
    let struck = std::time::Instant::now();
    let victim_answers = victim_run.await.unwrap();
    let survivor_answers = survivor_run.await.unwrap();
    landed_mid_burst(&victim_answers, struck, "kill");
    landed_mid_burst(&survivor_answers, struck, "kill");
    assert!(
        victim_answers.iter().any(|f| f.answer.is_ok()),
        "the victim acknowledged some writes before it died"
    );
    assert!(
        survivor_answers.iter().all(|f| f.answer.is_ok()),
        "the other host went on: {:?}",
        survivor_answers
            .iter()
            .filter(|f| f.answer.is_err())
            .collect::<Vec<_>>()
    );
    // The killed host's calls without an answer are "failed" for the audit (retried there).
    let victim_answers: Vec<Filed> = victim_answers
        .into_iter()
        .map(|f| Filed {
            answer: f.answer.map_err(|e| format!("connection closed: {e}")),
            ..f
        })
        .collect();
    audit(survivor.peer(), &[victim_answers, survivor_answers]).await;
    let _ = survivor.cancel().await;
    drop_collection(&qdrant, &collection).await;
}

/// One server per host (two hosts) files at once; `restart` strikes mid-burst (and returns
/// what the test still needs); then [`audit`]. Returns how many calls failed, and what
/// `restart` returned.
async fn restart_mid_burst<T>(
    hosts: &[PathBuf],
    args: &[String],
    restart: impl FnOnce() -> T,
) -> (usize, T) {
    let a = start_server(&hosts[0], args).await;
    let b = start_server(&hosts[1], args).await;
    let runs = (
        tokio::spawn(burst(a.peer().clone(), 0, PACE)),
        tokio::spawn(burst(b.peer().clone(), 1, PACE)),
    );
    tokio::time::sleep(FAULT_AFTER).await;
    let struck = std::time::Instant::now();
    let restarted = restart();
    let runs = [runs.0.await.unwrap(), runs.1.await.unwrap()];
    for run in &runs {
        landed_mid_burst(run, struck, "restart");
    }
    let failed = audit(b.peer(), &runs).await;
    let _ = a.cancel().await;
    let _ = b.cancel().await;
    (failed, restarted)
}

/// PostgreSQL restarts while both hosts file: calls fail clearly or go through, nothing
/// acknowledged is lost, nothing is filed twice, and the palace completes afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarting_mid_burst_loses_and_doubles_nothing() {
    let name = "postgres_restarting_mid_burst_loses_and_doubles_nothing";
    let Some(qdrant) = qdrant_url(name) else {
        return;
    };
    if postgres_url(name).is_none() {
        return;
    }
    let Some(pg) = ThrowawayPostgres::start(name) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let collection = fresh_collection("mempalace_fault_pg");
    let hosts = two_hosts(dir.path(), &qdrant, &pg.url, &collection);
    let (failed, ()) =
        restart_mid_burst(&hosts, &serve_args(&qdrant, &pg.url), || pg.restart()).await;
    eprintln!("postgres restart: {failed} call(s) failed and were filed again");
    drop_collection(&qdrant, &collection).await;
}

/// A Qdrant server of this test's own (`../shared/qdrant/start.sh` on fixed ports and a
/// storage folder that survives a restart).
struct OwnQdrant {
    pid: u32,
    http: u16,
    grpc: u16,
    storage: PathBuf,
}

impl OwnQdrant {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/qdrant/start.sh")
    }

    /// Starts it (again, on the same ports and storage).
    fn start(http: u16, storage: &Path) -> Option<Self> {
        let out = StdCommand::new("bash")
            .arg(Self::script())
            .env("QDRANT_HTTP_PORT", http.to_string())
            .env("QDRANT_GRPC_PORT", (http + 1).to_string())
            .env("QDRANT_STORAGE", storage)
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let pid = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("QDRANT_PID="))?
            .parse()
            .ok()?;
        Some(OwnQdrant {
            pid,
            http,
            grpc: http + 1,
            storage: storage.to_path_buf(),
        })
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc)
    }

    fn kill(&self) {
        let _ = StdCommand::new("kill")
            .args(["-KILL", &self.pid.to_string()])
            .status();
        // The ports are free once the process is gone.
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", self.http)).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A free port pair (http, http + 1) on loopback.
fn free_port_pair() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        if port < 65000 && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
}

/// Qdrant is killed and started again while both hosts file: the same guarantees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qdrant_restarting_mid_burst_loses_and_doubles_nothing() {
    let name = "qdrant_restarting_mid_burst_loses_and_doubles_nothing";
    let (Some(_), Some(pg)) = (qdrant_url(name), postgres_url(name)) else {
        return;
    };
    if !OwnQdrant::script().is_file() {
        let why = format!("SKIPPED {name}: ../shared/qdrant is not beside the repository");
        assert!(!skips_fail(), "{why}");
        eprintln!("{why}");
        return;
    }
    let storage = tempfile::tempdir().unwrap();
    let qdrant = OwnQdrant::start(free_port_pair(), storage.path()).expect("start a Qdrant");
    let dir = tempfile::tempdir().unwrap();
    let collection = fresh_collection("mempalace_fault_qdrant");
    let hosts = two_hosts(dir.path(), &qdrant.url(), &pg, &collection);
    let (failed, qdrant) = restart_mid_burst(&hosts, &serve_args(&qdrant.url(), &pg), || {
        qdrant.kill();
        std::thread::sleep(Duration::from_millis(500));
        OwnQdrant::start(qdrant.http, &qdrant.storage).expect("Qdrant starts again")
    })
    .await;
    eprintln!("qdrant restart: {failed} call(s) failed and were filed again");
    qdrant.kill();
}

/// A TCP proxy to PostgreSQL for one host: `cut` closes every connection through it and
/// refuses new ones, as a network cut between that host and the server does.
struct Proxy {
    port: u16,
    tasks: Arc<std::sync::Mutex<JoinSet<()>>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(target: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let tasks = Arc::new(std::sync::Mutex::new(JoinSet::new()));
        let spawned = Arc::clone(&tasks);
        let accept = tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                let target = target.clone();
                spawned.lock().unwrap().spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Proxy {
            port,
            tasks,
            accept,
        }
    }

    fn cut(&self) {
        self.accept.abort();
        self.tasks.lock().unwrap().abort_all();
    }
}

/// One host's network to PostgreSQL is cut mid-burst: its writes fail, saying so, while the
/// other host files everything (the cut host's lock, if it held it, went with its session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_cut_off_from_postgres_fails_clearly_and_the_fleet_goes_on() {
    let name = "a_host_cut_off_from_postgres_fails_clearly_and_the_fleet_goes_on";
    let (Some(qdrant), Some(pg)) = (qdrant_url(name), postgres_url(name)) else {
        return;
    };
    let pg_address = pg
        .split('@')
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("host:port in the test server's URL")
        .to_string();
    let proxy = Proxy::start(pg_address.clone()).await;
    let through_proxy = pg.replace(&pg_address, &format!("127.0.0.1:{}", proxy.port));
    let dir = tempfile::tempdir().unwrap();
    let collection = fresh_collection("mempalace_fault_cut");
    let hosts = two_hosts(dir.path(), &qdrant, &pg, &collection);
    let cut_off = start_server(&hosts[0], &serve_args(&qdrant, &through_proxy)).await;
    let connected = start_server(&hosts[1], &serve_args(&qdrant, &pg)).await;
    let runs = (
        tokio::spawn(burst(cut_off.peer().clone(), 0, PACE)),
        tokio::spawn(burst(connected.peer().clone(), 1, PACE)),
    );
    tokio::time::sleep(FAULT_AFTER).await;
    proxy.cut();
    let started = std::time::Instant::now();
    let cut_run = runs.0.await.unwrap();
    let connected_run = runs.1.await.unwrap();
    landed_mid_burst(&cut_run, started, "cut");
    landed_mid_burst(&connected_run, started, "cut");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the cut host's calls end (fail) rather than hang"
    );
    assert!(
        cut_run.iter().any(|f| f.answer.is_err()),
        "writes after the cut fail on the cut host"
    );
    assert!(
        connected_run.iter().all(|f| f.answer.is_ok()),
        "the rest of the fleet goes on: {:?}",
        connected_run
            .iter()
            .filter(|f| f.answer.is_err())
            .collect::<Vec<_>>()
    );
    audit(connected.peer(), &[cut_run, connected_run]).await;
    let _ = cut_off.cancel().await;
    let _ = connected.cancel().await;
    drop_collection(&qdrant, &collection).await;
}
