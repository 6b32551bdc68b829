//! The fleet's write lock and log signal on a real server (`MEMPALACE_TEST_POSTGRES_URL`;
//! SKIPPED without it): hosts take turns, a wait is bounded, a holder killed with SIGKILL
//! frees the lock at once, and an append on one host signals the others.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mempalace_conformance::live_service::postgres_url;
use mempalace_core::coordination::{Coordination, CoordinationLog, NewEvent};
use mempalace_core::{PalaceError, WriteLock};
use mempalace_kg_postgres::{
    PostgresCoordinationLog, PostgresKnowledgeGraph, PostgresWriteLock, SchemaName,
};

mod common;
use common::fresh_schema;

/// One host's lock on the palace `palace_id` (its own graph handle, own connections).
fn host_lock(url: &str, schema: &SchemaName, palace_id: &str) -> PostgresWriteLock {
    let graph = PostgresKnowledgeGraph::connect(url, schema.clone()).unwrap();
    PostgresWriteLock::new(&graph, palace_id).unwrap()
}

/// Four hosts × four tasks each increment a shared counter in a read → pause → write cycle
/// under the lock: no update is lost, so no two holders overlapped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hosts_take_turns() {
    let Some(url) = postgres_url("hosts_take_turns") else {
        return;
    };
    let schema = fresh_schema("lock_turns");
    let counter = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _host in 0..4 {
        let lock = Arc::new(host_lock(&url, &schema, "palace-turns"));
        for _ in 0..4 {
            let (lock, counter) = (Arc::clone(&lock), Arc::clone(&counter));
            tasks.push(tokio::spawn(async move {
                for _ in 0..10 {
                    let _guard = lock.acquire().await.unwrap();
                    let seen = counter.load(Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    counter.store(seen + 1, Ordering::SeqCst);
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 4 * 4 * 10);
}

/// A second host waits no longer than its timeout and is told the palace is busy; once the
/// holder drops its guard the lock is free. Other palaces on the server are not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_is_bounded_and_busy_is_reported() {
    let Some(url) = postgres_url("a_wait_is_bounded_and_busy_is_reported") else {
        return;
    };
    let schema = fresh_schema("lock_busy");
    let holder = host_lock(&url, &schema, "palace-busy");
    let other = host_lock(&url, &schema, "palace-busy").with_timeout(Duration::from_millis(300));
    let guard = holder.acquire().await.unwrap();
    let started = Instant::now();
    match other.acquire().await {
        Err(PalaceError::PalaceBusy { waited_ms, path }) => {
            assert!(waited_ms >= 250, "{waited_ms}");
            assert!(path.to_string_lossy().starts_with("postgres:"), "{path:?}");
        }
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("the lock was taken twice"),
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    let _elsewhere = host_lock(&url, &schema, "another-palace")
        .acquire()
        .await
        .unwrap();
    drop(guard);
    let _now = other.acquire().await.expect("free once the holder let go");
}

/// Run as a child process by [`a_holder_killed_with_sigkill_frees_the_lock`]: takes the lock,
/// says so, and sleeps until killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_holder_process() {
    let (Ok(url), Ok(schema)) = (
        std::env::var("MEMPALACE_LOCK_HOLDER_URL"),
        std::env::var("MEMPALACE_LOCK_HOLDER_SCHEMA"),
    ) else {
        return; // only meaningful as the child
    };
    let lock = host_lock(&url, &SchemaName::new(&schema).unwrap(), "palace-killed");
    let _guard = lock.acquire().await.unwrap();
    println!("LOCKED");
    tokio::time::sleep(Duration::from_secs(600)).await;
}

/// A host killed with SIGKILL while it holds the lock: the server ends its session, so
/// another host gets the lock within seconds, not after a stale-lock timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_killed_with_sigkill_frees_the_lock() {
    let Some(url) = postgres_url("a_holder_killed_with_sigkill_frees_the_lock") else {
        return;
    };
    let schema = fresh_schema("lock_killed");
    /// Kills the child when the test ends, whatever way it ends.
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = KillOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "lock_holder_process",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("MEMPALACE_LOCK_HOLDER_URL", &url)
            .env("MEMPALACE_LOCK_HOLDER_SCHEMA", schema.as_str())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let locked = tokio::task::spawn_blocking(move || {
        lines.any(|l| l.map(|l| l.contains("LOCKED")).unwrap_or(false))
    })
    .await
    .unwrap();
    assert!(locked, "the child took the lock");
    let other = host_lock(&url, &schema, "palace-killed").with_timeout(Duration::from_millis(500));
    assert!(
        matches!(other.acquire().await, Err(PalaceError::PalaceBusy { .. })),
        "held while the child lives"
    );
    child.0.kill().unwrap(); // SIGKILL
    child.0.wait().unwrap();
    let other = other.with_timeout(Duration::from_secs(10));
    let started = Instant::now();
    let _guard = other
        .acquire()
        .await
        .expect("the dead holder's lock is released");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// An append through one host's log changes the signal another host's log gives waiters
/// (LISTEN/NOTIFY), and a wait there returns the other host's event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_on_one_host_signals_the_others() {
    let Some(url) = postgres_url("an_append_on_one_host_signals_the_others") else {
        return;
    };
    let schema = fresh_schema("log_signal");
    let host_a = PostgresKnowledgeGraph::connect(&url, schema.clone()).unwrap();
    let host_b = PostgresKnowledgeGraph::connect(&url, schema.clone()).unwrap();
    let log_a = Arc::new(PostgresCoordinationLog::new(&host_a, "rep_a"));
    let log_b = Arc::new(PostgresCoordinationLog::new(&host_b, "rep_b"));
    let writer = Coordination::new(log_b.clone());
    // The log exists before the listener starts, as on a running fleet.
    writer
        .event_append(&NewEvent::new("hello", "fleet", "ops", "agent-b"))
        .await
        .unwrap();
    let mut signal = log_a
        .append_signal()
        .expect("a PostgreSQL log signals appends");
    // The listener has subscribed once its first signal arrives.
    tokio::time::timeout(Duration::from_secs(10), signal.changed())
        .await
        .expect("listener up")
        .unwrap();
    signal.borrow_and_update();
    writer
        .event_append(&NewEvent::new("task.request", "fleet", "ops", "agent-b"))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), signal.changed())
        .await
        .expect("the append on host B reached host A")
        .unwrap();
    let waiter = Coordination::new(log_a);
    let seen = waiter
        .event_wait(
            &mempalace_core::coordination::EventQuery {
                event_type: Some("task.request".into()),
                ..Default::default()
            },
            Some(10_000),
        )
        .await
        .unwrap();
    assert_eq!(seen.count, 1);
    assert_eq!(seen.events[0].origin_replica.as_deref(), Some("rep_b"));
}
