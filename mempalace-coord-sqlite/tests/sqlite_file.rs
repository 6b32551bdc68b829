//! SQLite-only behaviour: nothing created by reads, many instances and processes appending to
//! one file, and files in MemPalace 3.11's format (current and pre-provenance) read correctly.

use std::path::Path;
use std::sync::Arc;

use mempalace_coord_sqlite::{CREATE_SCHEMA, SqliteCoordinationLog};
use mempalace_core::coordination::{
    Coordination, CoordinationLog, EventQuery, NewArtifact, NewEvent,
};
use rusqlite::Connection;
use serde_json::json;

fn service(path: &Path) -> Coordination {
    Coordination::new(Arc::new(SqliteCoordinationLog::open(path)))
}

fn everything() -> EventQuery {
    EventQuery {
        order: Some("asc".into()),
        limit: Some(500),
        ..Default::default()
    }
}

#[tokio::test]
async fn reads_of_a_missing_log_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let log = SqliteCoordinationLog::in_palace(&palace);
    let c = Coordination::new(Arc::new(log.clone()));
    assert_eq!(c.event_list(&EventQuery::default()).await.unwrap().count, 0);
    assert!(
        c.event_wait(&EventQuery::default(), Some(0))
            .await
            .unwrap()
            .timed_out
    );
    assert!(c.artifact_get("art_x").await.is_err());
    assert!(log.get_event("evt_x").await.unwrap().is_none());
    assert!(
        !palace.exists(),
        "reads must not create the palace folder or file"
    );
    // Refused writes create nothing either.
    assert!(
        c.event_append(&NewEvent::new("BAD", "s", "r", "a"))
            .await
            .is_err()
    );
    assert!(!palace.exists());
    c.event_append(&NewEvent::new("ok", "s", "r", "a"))
        .await
        .unwrap();
    assert!(log.path().exists());
    let replica = std::fs::read_to_string(palace.join("replica.json")).unwrap();
    let replica: serde_json::Value = serde_json::from_str(&replica).unwrap();
    let stored = c.event_list(&EventQuery::default()).await.unwrap().events;
    assert_eq!(
        stored[0].origin_replica.as_deref(),
        replica["replica_id"].as_str()
    );
}

/// Independently opened instances on one file, each driven from its own OS thread and
/// runtime, append at once: nothing lost or duplicated, seq strictly increasing.
#[test]
fn many_instances_on_many_threads_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logstream.sqlite3");
    let threads = 8;
    let per_thread = 40;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async {
                    let c = service(&path);
                    for i in 0..per_thread {
                        let mut e = NewEvent::new("load.test", "s", "r", format!("t{t}"));
                        e.body = Some(format!("{t}:{i}"));
                        c.event_append(&e).await.unwrap();
                    }
                })
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let events = rt
        .block_on(service(&path).event_list(&everything()))
        .unwrap()
        .events;
    assert_eq!(events.len(), threads * per_thread);
    assert!(events.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(
        events.windows(2).all(|w| w[0].hlc < w[1].hlc),
        "hlc follows seq"
    );
    let mut bodies: Vec<_> = events.iter().map(|e| e.body.clone()).collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(bodies.len(), threads * per_thread);
}

const CHILD_ENV: &str = "MEMPALACE_COORD_CHILD_DB";

/// Only does something when started by `several_processes_append_at_once`.
#[tokio::test]
async fn child_process_appender() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let tag = std::env::var("MEMPALACE_COORD_CHILD_TAG").unwrap();
    let c = service(Path::new(&path));
    for i in 0..50 {
        let mut e = NewEvent::new("load.test", "s", "r", tag.clone());
        e.body = Some(format!("{tag}:{i}"));
        c.event_append(&e).await.unwrap();
    }
}

#[tokio::test]
async fn several_processes_append_at_once() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("palace").join("logstream.sqlite3");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|p| {
            std::process::Command::new(&exe)
                .args(["child_process_appender", "--exact", "--test-threads=1"])
                .env(CHILD_ENV, &path)
                .env("MEMPALACE_COORD_CHILD_TAG", format!("p{p}"))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let events = service(&path)
        .event_list(&everything())
        .await
        .unwrap()
        .events;
    assert_eq!(events.len(), 200);
    assert!(events.windows(2).all(|w| w[0].seq < w[1].seq));
    for p in 0..4 {
        let mine: Vec<_> = events
            .iter()
            .filter(|e| e.from_agent == format!("p{p}"))
            .map(|e| e.body.clone())
            .collect();
        let expected: Vec<_> = (0..50).map(|i| format!("p{p}:{i}")).collect();
        assert_eq!(mine, expected);
    }
    // All processes agreed on one replica id.
    let replicas: std::collections::BTreeSet<_> =
        events.iter().map(|e| e.origin_replica.clone()).collect();
    assert_eq!(replicas.len(), 1);
}

/// 3.11's `_migrate_schema` DDL that follows `_init_db`'s script.
const MIGRATE_3_11: &str = "
CREATE INDEX IF NOT EXISTS events_topic_created_idx ON events(topic, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS events_origin_seq_idx ON events(origin_replica, origin_seq);
CREATE INDEX IF NOT EXISTS events_hlc_idx ON events(hlc);
";

/// A file as 3.11's `Logstream` leaves it (DDL verbatim, rows inserted with its statements).
fn write_3_11_file(path: &Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA journal_mode=WAL;").unwrap();
    conn.execute_batch(CREATE_SCHEMA).unwrap();
    conn.execute_batch(MIGRATE_3_11).unwrap();
    let content = "--- a/ü\n+++ b/ü\n";
    conn.execute(
        "INSERT INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, \
         metadata_json, origin_replica) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rusqlite::params![
            "art_20260101T000000_aaaaaaaaaaaa",
            "patch",
            "feedface",
            content.len() as i64,
            content,
            "py-agent",
            "2026-01-01T00:00:00Z",
            "{\"branch\": \"main\"}",
            "rep_0123456789ab",
        ],
    )
    .unwrap();
    for (i, (id, to)) in [
        ("evt_20260101T000001_bbbbbbbbbbbb", Some("rust-agent")),
        ("evt_20260101T000002_cccccccccccc", Some("*")),
    ]
    .into_iter()
    .enumerate()
    {
        conn.execute(
            "INSERT INTO events (id, type, stream, room, topic, from_agent, to_agent, \
             correlation_id, branch, base_commit, status, body, created_at, metadata_json, \
             origin_replica, hlc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rusqlite::params![
                id,
                "task.request",
                "project/mempalace",
                "delegation",
                None::<String>,
                "py-agent",
                to,
                "task_1",
                "main",
                "abc1234",
                "open",
                format!("Grüße {i}"),
                format!("2026-01-01T00:00:0{}Z", i + 1),
                "{\"k\": [1, 2]}",
                "rep_0123456789ab",
                format!("1767225601000-00000{i}-rep_0123456789ab"),
            ],
        )
        .unwrap();
        let rowid = conn.last_insert_rowid();
        conn.execute(
            "UPDATE events SET origin_seq = rowid WHERE rowid = ?",
            [rowid],
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO event_artifacts (event_id, artifact_id) VALUES (?, ?)",
        [
            "evt_20260101T000001_bbbbbbbbbbbb",
            "art_20260101T000000_aaaaaaaaaaaa",
        ],
    )
    .unwrap();
}

#[tokio::test]
async fn reads_and_extends_a_3_11_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logstream.sqlite3");
    write_3_11_file(&path);
    let c = service(&path);
    let events = c.event_list(&everything()).await.unwrap().events;
    assert_eq!(events.len(), 2);
    let e = &events[0];
    assert_eq!(e.id, "evt_20260101T000001_bbbbbbbbbbbb");
    assert_eq!((e.seq, e.origin_seq), (1, Some(1)));
    assert_eq!(e.origin_replica.as_deref(), Some("rep_0123456789ab"));
    assert_eq!(e.event_type, "task.request");
    assert_eq!(e.body, "Grüße 0");
    assert_eq!(e.metadata, json!({"k": [1, 2]}));
    assert_eq!(e.artifact_ids, vec!["art_20260101T000000_aaaaaaaaaaaa"]);
    assert_eq!(e.topic, None);
    let inbox = c
        .event_list(&EventQuery {
            to_agent: Some("rust-agent".into()),
            ..everything()
        })
        .await
        .unwrap();
    assert_eq!(inbox.count, 2, "direct + broadcast");
    let art = c
        .artifact_get("art_20260101T000000_aaaaaaaaaaaa")
        .await
        .unwrap()
        .artifact;
    assert_eq!(art.content, "--- a/ü\n+++ b/ü\n");
    assert_eq!(art.metadata, json!({"branch": "main"}));
    // Appending continues the sequence and writes rows 3.11 reads the same way.
    let mut reply = NewEvent::new(
        "task.reply",
        "project/mempalace",
        "delegation",
        "rust-agent",
    );
    reply.correlation_id = Some("task_1".into());
    reply.metadata = Some(json!({"z": 1, "a": "ü"}));
    reply.artifact_ids = Some(vec!["art_20260101T000000_aaaaaaaaaaaa".into()]);
    let written = c.event_append(&reply).await.unwrap().event;
    assert_eq!(written.seq, 3);
    let put = c
        .artifact_put(&NewArtifact {
            kind: "note".into(),
            content: "n".into(),
            created_by: "rust-agent".into(),
            metadata: None,
        })
        .await
        .unwrap()
        .artifact;
    let conn = Connection::open(&path).unwrap();
    let (origin_seq, metadata_json, hlc): (i64, String, String) = conn
        .query_row(
            "SELECT origin_seq, metadata_json, hlc FROM events WHERE id = ?",
            [&written.id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(origin_seq, 3);
    assert_eq!(
        metadata_json, r#"{"a": "ü", "z": 1}"#,
        "3.11's json.dumps text"
    );
    assert!(hlc.as_str() > "1767225601000-000001-rep_0123456789ab");
    let links: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM event_artifacts WHERE event_id = ?",
            [&written.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(links, 1);
    let (sha, size, meta): (String, i64, String) = conn
        .query_row(
            "SELECT sha256, size_bytes, metadata_json FROM artifacts WHERE id = ?",
            [&put.id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(sha, put.sha256);
    assert_eq!((size, meta.as_str()), (1, "{}"));
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

/// A log from before the topic and provenance columns is migrated as 3.11 migrates it.
#[tokio::test]
async fn migrates_a_pre_provenance_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logstream.sqlite3");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE events (id TEXT PRIMARY KEY, type TEXT NOT NULL, stream TEXT NOT NULL,
                room TEXT NOT NULL, from_agent TEXT NOT NULL, to_agent TEXT, correlation_id TEXT,
                branch TEXT, base_commit TEXT, status TEXT, body TEXT NOT NULL DEFAULT '',
                created_at TEXT NOT NULL, metadata_json TEXT NOT NULL DEFAULT '{}');
             CREATE TABLE artifacts (id TEXT PRIMARY KEY, kind TEXT NOT NULL,
                sha256 TEXT NOT NULL, size_bytes INTEGER NOT NULL, content TEXT NOT NULL,
                created_by TEXT NOT NULL, created_at TEXT NOT NULL,
                metadata_json TEXT NOT NULL DEFAULT '{}');
             CREATE TABLE event_artifacts (event_id TEXT NOT NULL, artifact_id TEXT NOT NULL,
                PRIMARY KEY (event_id, artifact_id));
             INSERT INTO events (id, type, stream, room, from_agent, created_at)
                VALUES ('evt_old', 'task.request', 's', 'r', 'a', '2026-01-01T00:00:00Z');",
        )
        .unwrap();
    }
    let c = service(&path);
    let events = c.event_list(&everything()).await.unwrap().events;
    assert_eq!(events.len(), 1);
    let old = &events[0];
    assert_eq!(old.origin_seq, Some(1));
    let replica = old.origin_replica.clone().unwrap();
    assert!(replica.starts_with("rep_"));
    assert_eq!(
        old.hlc.as_deref(),
        Some(format!("1767225600000-000001-{replica}").as_str())
    );
    let new = c
        .event_append(&NewEvent::new("x", "s", "r", "a"))
        .await
        .unwrap()
        .event;
    assert_eq!(new.seq, 2);
    assert_eq!(new.origin_replica, Some(replica));
    let conn = Connection::open(&path).unwrap();
    let indexes: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN \
             ('events_topic_created_idx', 'events_origin_seq_idx', 'events_hlc_idx', \
              'events_stream_created_idx', 'artifacts_sha256_idx')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 5);
}
