//! Behaviour tests for `CoordinationLog` implementations, run through the
//! [`Coordination`] service (run them with [`crate::coordination_log_conformance!`]).

use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mempalace_core::PalaceError;
use mempalace_core::coordination::{
    Coordination, CoordinationLog, Event, EventQuery, NewArtifact, NewEvent, NewPatch, NewTask,
};
use serde_json::json;

/// Opens another handle on the same log (a second instance on the same file, or the same
/// in-process log).
pub type Reopen = Arc<dyn Fn() -> Arc<dyn CoordinationLog> + Send + Sync>;

/// A log under test, a way to open it again, and whatever must outlive it (a temp dir).
pub struct CoordFixture {
    /// The log under test.
    pub log: Arc<dyn CoordinationLog>,
    /// Opens another handle on the same log.
    pub reopen: Reopen,
    _keep_alive: Option<Box<dyn Any + Send + Sync>>,
}

impl CoordFixture {
    /// A fixture whose other handles are `log` itself.
    pub fn new(log: Arc<dyn CoordinationLog>) -> Self {
        let same = Arc::clone(&log);
        CoordFixture {
            log,
            reopen: Arc::new(move || Arc::clone(&same)),
            _keep_alive: None,
        }
    }

    /// A fixture with its own `reopen`, keeping `guard` alive as long as the log.
    pub fn with_reopen(
        log: Arc<dyn CoordinationLog>,
        reopen: Reopen,
        guard: impl Any + Send + Sync,
    ) -> Self {
        CoordFixture {
            log,
            reopen,
            _keep_alive: Some(Box::new(guard)),
        }
    }

    /// The service over the log.
    pub fn service(&self) -> Coordination {
        Coordination::new(Arc::clone(&self.log))
    }

    /// The service over another handle on the same log.
    pub fn other_service(&self) -> Coordination {
        Coordination::new((self.reopen)())
    }
}

/// Makes fresh, empty coordination logs.
#[async_trait]
pub trait CoordFactory: Send + Sync {
    /// A new log sharing nothing with earlier ones.
    async fn create(&self) -> CoordFixture;
}

/// Generates one `#[tokio::test]` per coordination-log behaviour for a [`CoordFactory`] value.
/// `requires = "VAR"` gates each test on a server address as
/// [`vector_store_conformance!`](crate::vector_store_conformance) does.
#[macro_export]
macro_rules! coordination_log_conformance {
    ($factory:expr $(, requires = $var:literal)?) => {
        $crate::coordination_log_conformance!(@tests $factory, [$($var)?];
            empty_log_reads_nothing, append_list_order_and_cursors, filters_and_broadcast,
            validation_refusals_change_nothing, artifact_round_trip_is_exact,
            unknown_artifact_refused_and_nothing_stored, ack_routes_back_to_writer,
            patch_submit_stores_both, task_create_builds_request, preview_truncates_bodies,
            wait_wakes_on_append_and_times_out, concurrent_appends_all_land);
    };
    (@tests $factory:expr, $requires:tt; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                if !$crate::vector_store_conformance!(@available $requires, $name) {
                    return;
                }
                $crate::coordination_suite::$name(&$factory).await;
            }
        )*
    };
}

fn ev(kind: &str, from: &str) -> NewEvent {
    NewEvent::new(kind, "project/demo", "delegation", from)
}

fn ids(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| e.id.clone()).collect()
}

fn q() -> EventQuery {
    EventQuery::default()
}

fn reason(err: PalaceError) -> String {
    match err {
        PalaceError::InvalidInput { reason, .. } => reason,
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

async fn all(c: &Coordination) -> Vec<Event> {
    c.event_list(&EventQuery {
        order: Some("asc".into()),
        limit: Some(500),
        ..q()
    })
    .await
    .unwrap()
    .events
}

/// A log never written lists nothing, finds nothing and a zero wait times out.
pub async fn empty_log_reads_nothing<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let list = c.event_list(&q()).await.unwrap();
    assert!(list.events.is_empty());
    assert_eq!(list.count, 0);
    let wait = c.event_wait(&q(), Some(0)).await.unwrap();
    assert!(wait.timed_out && wait.events.is_empty());
    let err = c.artifact_get("art_nope").await.unwrap_err();
    assert_eq!(reason(err), "artifact 'art_nope' not found");
    assert!(fx.log.get_event("evt_nope").await.unwrap().is_none());
    let err = c
        .event_ack("evt_nope", "me", None, None, None)
        .await
        .unwrap_err();
    assert_eq!(reason(err), "event 'evt_nope' not found");
    assert!(all(&c).await.is_empty());
}

/// Appends get increasing `seq`; lists default to newest first, cursors are strict.
pub async fn append_list_order_and_cursors<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let mut appended = Vec::new();
    for i in 0..6 {
        let mut e = ev("task.reply", "alice");
        e.body = Some(format!("body {i}"));
        e.metadata = Some(json!({"i": i, "nested": {"ü": [1, 2]}}));
        let written = c.event_append(&e).await.unwrap();
        assert!(written.success);
        appended.push(written.event);
    }
    let e0 = &appended[0];
    assert!(e0.id.starts_with("evt_") && e0.id.len() == 32, "{}", e0.id);
    assert_eq!(e0.created_at.len(), 20);
    assert!(e0.created_at.ends_with('Z') && e0.created_at.as_bytes()[10] == b'T');
    assert_eq!(e0.origin_seq, Some(e0.seq));
    assert!(e0.origin_replica.is_some());
    assert_eq!(e0.metadata, json!({"i": 0, "nested": {"ü": [1, 2]}}));
    assert_eq!(
        (e0.body.as_str(), e0.event_type.as_str()),
        ("body 0", "task.reply")
    );
    let seqs: Vec<i64> = appended.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let hlcs: Vec<&str> = appended.iter().filter_map(|e| e.hlc.as_deref()).collect();
    assert!(hlcs.windows(2).all(|w| w[0] < w[1]), "{hlcs:?}");

    let stored = all(&c).await;
    assert_eq!(
        stored, appended,
        "list returns events exactly as append did"
    );

    let want = |r: std::ops::Range<usize>, rev: bool| {
        let mut v = ids(&appended[r]);
        if rev {
            v.reverse();
        }
        v
    };
    // Default: newest first.
    let l = c.event_list(&q()).await.unwrap();
    assert_eq!(ids(&l.events), want(0..6, true));
    assert_eq!(l.count, 6);
    // A cursor defaults to oldest first, strictly after.
    let since = EventQuery {
        since_event_id: Some(appended[2].id.clone()),
        ..q()
    };
    assert_eq!(
        ids(&c.event_list(&since).await.unwrap().events),
        want(3..6, false)
    );
    let since_desc = EventQuery {
        order: Some("DESC".into()),
        ..since.clone()
    };
    assert_eq!(
        ids(&c.event_list(&since_desc).await.unwrap().events),
        want(3..6, true)
    );
    // Before is strict too; limits cut from the ordered end.
    let before = EventQuery {
        before_event_id: Some(appended[3].id.clone()),
        limit: Some(2),
        ..q()
    };
    assert_eq!(
        ids(&c.event_list(&before).await.unwrap().events),
        want(1..3, true)
    );
    let window = EventQuery {
        since_event_id: Some(appended[0].id.clone()),
        before_event_id: Some(appended[5].id.clone()),
        limit: Some(3),
        ..q()
    };
    assert_eq!(
        ids(&c.event_list(&window).await.unwrap().events),
        want(1..4, false)
    );
    let last = EventQuery {
        since_event_id: Some(appended[5].id.clone()),
        ..q()
    };
    assert!(c.event_list(&last).await.unwrap().events.is_empty());
    // since_created_at is inclusive; a date covers the whole day.
    let day = &e0.created_at[..10];
    for value in [day.to_string(), e0.created_at.clone()] {
        let l = c
            .event_list(&EventQuery {
                since_created_at: Some(value),
                ..q()
            })
            .await
            .unwrap();
        assert_eq!(l.count, 6);
    }
    let future = EventQuery {
        since_created_at: Some("2999-01-01T00:00:00Z".into()),
        ..q()
    };
    assert_eq!(c.event_list(&future).await.unwrap().count, 0);
    // Unknown anchors are errors, not empty results.
    let err = c
        .event_list(&EventQuery {
            since_event_id: Some("evt_missing".into()),
            ..q()
        })
        .await
        .unwrap_err();
    assert_eq!(reason(err), "since_event_id 'evt_missing' not found");
    let err = c
        .event_list(&EventQuery {
            before_event_id: Some("evt_missing".into()),
            ..q()
        })
        .await
        .unwrap_err();
    assert_eq!(reason(err), "before_event_id 'evt_missing' not found");
    // Limits above 500 are capped, not refused.
    let big = EventQuery {
        limit: Some(100_000),
        ..q()
    };
    assert_eq!(c.event_list(&big).await.unwrap().count, 6);
}

/// Exact filters; `to_agent` also matches broadcasts; `writer` filters the writer and
/// `from_agent` only adds a note.
pub async fn filters_and_broadcast<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let mut direct = ev("task.request", "alice");
    direct.to_agent = Some("bob".into());
    direct.correlation_id = Some("task_1".into());
    direct.status = Some("open".into());
    direct.topic = Some("auth-v2".into());
    let direct = c.event_append(&direct).await.unwrap().event;
    let mut broadcast = ev("status.update", "carol");
    broadcast.to_agent = Some("*".into());
    broadcast.room = "status".into();
    let broadcast = c.event_append(&broadcast).await.unwrap().event;
    let mut other = ev("task.request", "bob");
    other.to_agent = Some("dave".into());
    other.stream = "project/other".into();
    let other = c.event_append(&other).await.unwrap().event;

    let run = |query: EventQuery| {
        let c = c.clone();
        async move {
            let mut v = ids(&c.event_list(&query).await.unwrap().events);
            v.sort();
            v
        }
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let inbox = EventQuery {
        to_agent: Some("bob".into()),
        ..q()
    };
    assert_eq!(
        run(inbox).await,
        sorted(vec![direct.id.clone(), broadcast.id.clone()])
    );
    let writer = EventQuery {
        writer: Some("bob".into()),
        ..q()
    };
    assert_eq!(run(writer).await, vec![other.id.clone()]);
    // from_agent is the caller's identity: no narrowing, a note.
    let me = c
        .event_list(&EventQuery {
            from_agent: Some("bob".into()),
            ..q()
        })
        .await
        .unwrap();
    assert_eq!(me.count, 3);
    assert!(me.note.is_some());
    let both = c
        .event_list(&EventQuery {
            from_agent: Some("bob".into()),
            writer: Some("alice".into()),
            ..q()
        })
        .await
        .unwrap();
    assert_eq!(ids(&both.events), vec![direct.id.clone()]);
    assert!(both.note.is_none());
    for query in [
        EventQuery {
            event_type: Some("task.request".into()),
            stream: Some("project/demo".into()),
            ..q()
        },
        EventQuery {
            correlation_id: Some("task_1".into()),
            ..q()
        },
        EventQuery {
            status: Some("open".into()),
            ..q()
        },
        EventQuery {
            topic: Some(" auth-v2 ".into()),
            ..q()
        },
        EventQuery {
            room: Some("delegation".into()),
            to_agent: Some("bob".into()),
            ..q()
        },
    ] {
        assert_eq!(
            run(query.clone()).await,
            vec![direct.id.clone()],
            "{query:?}"
        );
    }
    let nobody = EventQuery {
        to_agent: Some("zed".into()),
        ..q()
    };
    assert_eq!(run(nobody).await, vec![broadcast.id.clone()]);
}

/// Bad input is refused with 3.11's message and stores nothing.
pub async fn validation_refusals_change_nothing<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let cases: Vec<(NewEvent, &str)> = vec![
        (ev("", "a"), "type must be a non-empty string"),
        (
            ev("Task.Request", "a"),
            "type='Task.Request' is not a valid event type (lowercase letters, digits, '.', '_', '-'; max 64 chars)",
        ),
        (ev(&"a".repeat(65), "a"), ""),
        (ev("x", ""), "from_agent must be a non-empty string"),
        (ev("x", "   "), "from_agent must be a non-empty string"),
        (
            NewEvent::new("x", "", "room", "a"),
            "stream must be a non-empty string",
        ),
        (
            NewEvent::new("x", "s", "r\nr", "a"),
            "room contains control characters",
        ),
        (
            NewEvent::new("x", "s".repeat(257), "r", "a"),
            "stream exceeds maximum length of 256 characters",
        ),
        (
            NewEvent {
                status: Some("done".into()),
                ..ev("x", "a")
            },
            "",
        ),
        (
            NewEvent {
                body: Some("a\0b".into()),
                ..ev("x", "a")
            },
            "body contains null bytes",
        ),
        (
            NewEvent {
                body: Some("é".repeat(128 * 1024 + 1)),
                ..ev("x", "a")
            },
            "body is 262146 bytes; maximum is 262144 bytes",
        ),
        (
            NewEvent {
                metadata: Some(json!(["not", "an", "object"])),
                ..ev("x", "a")
            },
            "metadata must be an object",
        ),
        (
            NewEvent {
                metadata: Some(json!({"big": "x".repeat(70_000)})),
                ..ev("x", "a")
            },
            "metadata exceeds maximum size of 65536 bytes",
        ),
        (
            NewEvent {
                artifact_ids: Some(vec![String::new()]),
                ..ev("x", "a")
            },
            "artifact_ids must be a list of artifact id strings",
        ),
    ];
    for (bad, message) in cases {
        let err = c.event_append(&bad).await.unwrap_err();
        let got = reason(err);
        if !message.is_empty() {
            assert_eq!(got, message);
        }
    }
    let art_cases: Vec<(NewArtifact, &str)> = vec![
        (
            NewArtifact {
                kind: "binary".into(),
                content: "x".into(),
                created_by: "a".into(),
                metadata: None,
            },
            "kind='binary' is not one of: file, json, log, note, patch",
        ),
        (
            NewArtifact {
                kind: "note".into(),
                content: String::new(),
                created_by: "a".into(),
                metadata: None,
            },
            "content must be a non-empty string",
        ),
        (
            NewArtifact {
                kind: "note".into(),
                content: "a\0".into(),
                created_by: "a".into(),
                metadata: None,
            },
            "content contains null bytes",
        ),
        (
            NewArtifact {
                kind: "note".into(),
                content: "x".repeat(4 * 1024 * 1024 + 1),
                created_by: "a".into(),
                metadata: None,
            },
            "content is 4194305 bytes; maximum is 4194304 bytes",
        ),
        (
            NewArtifact {
                kind: "note".into(),
                content: "x".into(),
                created_by: String::new(),
                metadata: None,
            },
            "created_by must be a non-empty string",
        ),
    ];
    for (bad, message) in art_cases {
        assert_eq!(reason(c.artifact_put(&bad).await.unwrap_err()), message);
    }
    // A patch whose event is invalid stores neither the artifact nor the event.
    let bad_patch = NewPatch {
        content: "diff\n".into(),
        from_agent: "a".into(),
        stream: String::new(),
        ..Default::default()
    };
    assert_eq!(
        reason(c.patch_submit(&bad_patch).await.unwrap_err()),
        "stream must be a non-empty string"
    );
    for bad in [
        EventQuery {
            limit: Some(0),
            ..q()
        },
        EventQuery {
            order: Some("sideways".into()),
            ..q()
        },
        EventQuery {
            event_type: Some("BAD".into()),
            ..q()
        },
        EventQuery {
            since_created_at: Some("yesterday".into()),
            ..q()
        },
        EventQuery {
            status: Some("done".into()),
            ..q()
        },
    ] {
        assert!(c.event_list(&bad).await.is_err(), "{bad:?}");
    }
    assert!(c.event_wait(&q(), Some(-1)).await.is_err());
    assert!(all(&c).await.is_empty(), "refusals must store nothing");
    // The limits themselves are accepted.
    let at_limit = NewEvent {
        body: Some("x".repeat(256 * 1024)),
        ..ev("x", "a")
    };
    c.event_append(&at_limit).await.unwrap();
    assert_eq!(all(&c).await.len(), 1);
}

/// Content comes back byte for byte with its SHA-256, size and metadata.
pub async fn artifact_round_trip_is_exact<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let content = "Grüße, 世界 🌍\r\n\ttab\n";
    let put = c
        .artifact_put(&NewArtifact {
            kind: "file".into(),
            content: content.into(),
            created_by: " alice ".into(),
            metadata: Some(json!({"path": "src/ü.rs"})),
        })
        .await
        .unwrap();
    assert!(put.success);
    let record = put.artifact;
    assert!(record.id.starts_with("art_") && record.id.len() == 32);
    assert_eq!(
        record.sha256,
        "cba6c0bbe42f83c3cf632be908a259955c88a549ed110b78b0cadd29bcfabd8a"
    );
    assert_eq!(record.size_bytes, 27);
    assert_eq!(record.created_by, "alice");
    assert!(record.warnings.is_none());
    let got = c.artifact_get(&record.id).await.unwrap().artifact;
    assert_eq!(got.content, content);
    assert_eq!(got.sha256, record.sha256);
    assert_eq!(got.size_bytes, 27);
    assert_eq!(got.kind, "file");
    assert_eq!(got.created_at, record.created_at);
    assert_eq!(got.origin_replica, record.origin_replica);
    assert_eq!(got.metadata, json!({"path": "src/ü.rs"}));
    // Patch warnings: missing trailing newline and CRLF, content still stored verbatim.
    let patch = c
        .artifact_put(&NewArtifact {
            kind: "patch".into(),
            content: "--- a\r\n+++ b".into(),
            created_by: "bob".into(),
            metadata: None,
        })
        .await
        .unwrap()
        .artifact;
    assert_eq!(patch.warnings.as_ref().map(Vec::len), Some(2));
    let got = c.artifact_get(&patch.id).await.unwrap().artifact;
    assert_eq!(got.content, "--- a\r\n+++ b");
    assert_eq!(got.metadata, json!({}));
    let clean = c
        .artifact_put(&NewArtifact {
            kind: "patch".into(),
            content: "hello\n".into(),
            created_by: "bob".into(),
            metadata: None,
        })
        .await
        .unwrap()
        .artifact;
    assert!(clean.warnings.is_none());
    assert_eq!(
        clean.sha256,
        "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
    );
    // An event may reference both; lists report the ids sorted.
    let mut e = ev("note.added", "alice");
    e.artifact_ids = Some(vec![patch.id.clone(), record.id.clone(), patch.id.clone()]);
    let written = c.event_append(&e).await.unwrap().event;
    assert_eq!(
        written.artifact_ids,
        vec![patch.id.clone(), record.id.clone()]
    );
    let mut sorted = written.artifact_ids.clone();
    sorted.sort();
    assert_eq!(all(&c).await[0].artifact_ids, sorted);
}

/// An event naming an unknown artifact is refused and nothing is stored.
pub async fn unknown_artifact_refused_and_nothing_stored<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let art = c
        .artifact_put(&NewArtifact {
            kind: "log".into(),
            content: "ok".into(),
            created_by: "a".into(),
            metadata: None,
        })
        .await
        .unwrap()
        .artifact;
    let mut e = ev("patch.ready", "a");
    e.artifact_ids = Some(vec![art.id.clone(), "art_missing".into()]);
    let err = c.event_append(&e).await.unwrap_err();
    assert_eq!(
        reason(err),
        "artifact_ids references unknown artifact 'art_missing'"
    );
    assert!(all(&c).await.is_empty());
    e.artifact_ids = Some(vec![art.id.clone()]);
    c.event_append(&e).await.unwrap();
    assert_eq!(all(&c).await[0].artifact_ids, vec![art.id]);
}

/// An ack goes back to the writer, copies routing and correlation, names its target.
pub async fn ack_routes_back_to_writer<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let mut request = ev("task.request", "alice");
    request.to_agent = Some("bob".into());
    request.topic = Some("auth".into());
    let request = c.event_append(&request).await.unwrap().event;
    let ack = c
        .event_ack(&request.id, "bob", Some("claimed"), Some("on it"), None)
        .await
        .unwrap();
    assert!(ack.success);
    let ack = ack.event;
    assert_eq!(ack.event_type, "event.ack");
    assert_eq!(ack.from_agent, "bob");
    assert_eq!(ack.to_agent.as_deref(), Some("alice"));
    assert_eq!(ack.correlation_id.as_deref(), Some(request.id.as_str()));
    assert_eq!(
        (ack.stream.as_str(), ack.room.as_str()),
        ("project/demo", "delegation")
    );
    assert_eq!(ack.topic.as_deref(), Some("auth"));
    assert_eq!(ack.status.as_deref(), Some("claimed"));
    assert_eq!(ack.body, "on it");
    assert_eq!(ack.metadata, json!({"ack_of": request.id}));
    // A correlated target keeps its correlation id; the topic can be overridden.
    let mut corr = ev("task.request", "carol");
    corr.correlation_id = Some("task_9".into());
    let corr = c.event_append(&corr).await.unwrap().event;
    let ack2 = c
        .event_ack(&corr.id, "dave", None, None, Some("ops"))
        .await
        .unwrap()
        .event;
    assert_eq!(ack2.correlation_id.as_deref(), Some("task_9"));
    assert_eq!(ack2.topic.as_deref(), Some("ops"));
    assert_eq!(ack2.status, None);
    // The target is unchanged.
    let stored = fx.log.get_event(&request.id).await.unwrap().unwrap();
    assert_eq!(stored, request);
    assert!(
        c.event_ack(&request.id, "bob", Some("nope"), None, None)
            .await
            .is_err()
    );
    assert!(
        c.event_ack(&request.id, "", None, None, None)
            .await
            .is_err()
    );
    assert_eq!(all(&c).await.len(), 4);
}

/// `patch_submit` stores the patch and a `patch.ready` event referencing it.
pub async fn patch_submit_stores_both<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-ä\n+ö\n";
    let out = c
        .patch_submit(&NewPatch {
            content: diff.into(),
            from_agent: "bob".into(),
            stream: "project/demo".into(),
            to_agent: Some("alice".into()),
            correlation_id: Some("task_1".into()),
            branch: Some("fix/x".into()),
            base_commit: Some("abc1234".into()),
            metadata: Some(json!({"tests": "pass"})),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(out.success);
    assert_eq!(out.artifact.kind, "patch");
    assert_eq!(out.artifact.created_by, "bob");
    assert!(out.artifact.warnings.is_none());
    let e = &out.event;
    assert_eq!(e.event_type, "patch.ready");
    assert_eq!(e.room, "patches");
    assert_eq!(e.status.as_deref(), Some("ready"));
    assert_eq!(e.artifact_ids, vec![out.artifact.id.clone()]);
    assert_eq!(e.metadata, json!({"tests": "pass"}));
    assert_eq!(e.branch.as_deref(), Some("fix/x"));
    let got = c.artifact_get(&out.artifact.id).await.unwrap().artifact;
    assert_eq!(got.content, diff);
    assert_eq!(got.metadata, json!({"tests": "pass"}));
    let ready = c
        .event_list(&EventQuery {
            event_type: Some("patch.ready".into()),
            correlation_id: Some("task_1".into()),
            ..q()
        })
        .await
        .unwrap();
    assert_eq!(ready.events, vec![out.event.clone()]);
    let custom = c
        .patch_submit(&NewPatch {
            content: "x".into(),
            from_agent: "bob".into(),
            stream: "s".into(),
            room: Some("reviews".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(custom.event.room, "reviews");
    assert_eq!(custom.artifact.warnings.as_ref().map(Vec::len), Some(1));
}

/// `task_create` appends one canonical `task.request` and returns its handoff line.
pub async fn task_create_builds_request<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let task = NewTask {
        project: "MemPalace RS".into(),
        from_agent: " mac-codex ".into(),
        to_agent: "windows-codex".into(),
        goal: "Fix search: echo ranking!".into(),
        branch: "fix/echo".into(),
        base_commit: "ABCDEF1234".into(),
        done: "Tests pass.".into(),
    };
    let out = c.task_create(&task).await.unwrap();
    assert!(out.success);
    let t = &out.task;
    assert_eq!(t.event_type, "task.request");
    assert_eq!(t.stream, "project/mempalace_rs");
    assert_eq!(t.room, "delegation");
    assert_eq!(t.from_agent, "mac-codex");
    assert_eq!(t.to_agent.as_deref(), Some("windows-codex"));
    assert_eq!(t.status.as_deref(), Some("open"));
    assert_eq!(t.base_commit.as_deref(), Some("abcdef1234"));
    assert_eq!(t.branch.as_deref(), Some("fix/echo"));
    let corr = t.correlation_id.clone().unwrap();
    assert!(corr.starts_with("task_fix_search_echo_ranking_"), "{corr}");
    assert_eq!(corr.len(), "task_fix_search_echo_ranking_".len() + 8);
    assert_eq!(
        t.body,
        "Goal:\nFix search: echo ranking!\n\nDefinition of done:\nTests pass.\n\nDelivery:\n\
         Close the loop through MemPalace: claim the request, then submit a patch with \
         mempalace_patch_submit or reply with blocked/failed evidence."
    );
    assert_eq!(
        out.handoff,
        format!(
            "Open MemPalace task {corr} as windows-codex. Claim it, follow its exact definition \
             of done, and deliver through the logstream."
        )
    );
    let v = serde_json::to_value(&out).unwrap();
    assert_eq!(v["success"], json!(true));
    assert_eq!(v["task"]["type"], json!("task.request"));
    for (bad, message) in [
        (
            NewTask {
                base_commit: "main".into(),
                ..task.clone()
            },
            "task base commit must be a hexadecimal Git object id (at least 7 characters), not a branch or tag",
        ),
        (
            NewTask {
                goal: "  ".into(),
                ..task.clone()
            },
            "task goal must not be empty",
        ),
        (
            NewTask {
                done: String::new(),
                ..task.clone()
            },
            "task definition of done must not be empty",
        ),
        (
            NewTask {
                project: String::new(),
                ..task.clone()
            },
            "task project must not be empty",
        ),
    ] {
        assert_eq!(reason(c.task_create(&bad).await.unwrap_err()), message);
    }
    assert_eq!(all(&c).await.len(), 1);
}

/// `preview` cuts bodies to 200 characters and marks them; short bodies are untouched.
pub async fn preview_truncates_bodies<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let mut long = ev("status.update", "a");
    long.body = Some("ß".repeat(450));
    c.event_append(&long).await.unwrap();
    let mut short = ev("status.update", "a");
    short.body = Some("short".into());
    c.event_append(&short).await.unwrap();
    let l = c
        .event_list(&EventQuery {
            preview: true,
            order: Some("asc".into()),
            ..q()
        })
        .await
        .unwrap();
    assert_eq!(l.events[0].body, "ß".repeat(200));
    assert_eq!(l.events[0].body_truncated, Some(true));
    assert_eq!(l.events[0].body_length, Some(450));
    assert_eq!(l.events[1].body, "short");
    let v = serde_json::to_value(&l.events[1]).unwrap();
    assert!(v.get("body_truncated").is_none() && v.get("body_length").is_none());
    assert_eq!(
        all(&c).await[0].body,
        "ß".repeat(450),
        "stored body untouched"
    );
}

/// A wait returns as soon as another task appends a match, and times out otherwise.
pub async fn wait_wakes_on_append_and_times_out<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let c = fx.service();
    let writer = fx.other_service();
    let cursor = c.event_append(&ev("hello", "a")).await.unwrap().event;
    let query = EventQuery {
        correlation_id: Some("task_w".into()),
        since_event_id: Some(cursor.id.clone()),
        ..q()
    };
    // Times out with an empty answer.
    let started = Instant::now();
    let out = c.event_wait(&query, Some(300)).await.unwrap();
    assert!(out.timed_out && out.events.is_empty() && out.count == 0);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(started.elapsed() < Duration::from_secs(5));
    // Wakes early when a match arrives from elsewhere.
    let appender = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        writer.event_append(&ev("noise", "b")).await.unwrap();
        let mut e = ev("task.reply", "b");
        e.correlation_id = Some("task_w".into());
        writer.event_append(&e).await.unwrap().event
    });
    let started = Instant::now();
    let out = c
        .event_wait(
            &EventQuery {
                from_agent: Some("me".into()),
                ..query.clone()
            },
            Some(20_000),
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let sent = appender.await.unwrap();
    assert!(!out.timed_out);
    assert_eq!(out.events, vec![sent]);
    assert_eq!(out.count, 1);
    assert!(out.note.is_some());
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    // A match already there returns at once.
    let started = Instant::now();
    let out = c.event_wait(&query, None).await.unwrap();
    assert!(!out.timed_out && out.count == 1);
    assert!(started.elapsed() < Duration::from_secs(5));
    // Bad anchors fail rather than wait.
    let bad = EventQuery {
        since_event_id: Some("evt_nope".into()),
        ..q()
    };
    assert!(c.event_wait(&bad, Some(10_000)).await.is_err());
}

/// Many tasks (and handles) appending at once: every event lands once, with distinct `seq`.
pub async fn concurrent_appends_all_land<F: CoordFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let tasks = 8;
    let per_task = 25;
    let mut handles = Vec::new();
    for t in 0..tasks {
        let c = if t % 2 == 0 {
            fx.service()
        } else {
            fx.other_service()
        };
        handles.push(tokio::spawn(async move {
            let mut out = Vec::new();
            for i in 0..per_task {
                let mut e = ev("load.test", &format!("agent-{t}"));
                e.body = Some(format!("{t}:{i}"));
                out.push(c.event_append(&e).await.unwrap().event);
            }
            out
        }));
    }
    let mut written = Vec::new();
    for h in handles {
        written.extend(h.await.unwrap());
    }
    let c = fx.service();
    let stored = all(&c).await;
    assert_eq!(stored.len(), tasks * per_task);
    let mut seqs: Vec<i64> = stored.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "asc order by seq");
    seqs.dedup();
    assert_eq!(seqs.len(), tasks * per_task);
    let mut bodies: Vec<String> = stored.iter().map(|e| e.body.clone()).collect();
    bodies.sort();
    bodies.dedup();
    assert_eq!(bodies.len(), tasks * per_task);
    // What each append returned is what was stored.
    written.sort_by_key(|e| e.seq);
    assert_eq!(written, stored);
    // Each writer's events are in its own append order.
    for t in 0..tasks {
        let mine: Vec<String> = stored
            .iter()
            .filter(|e| e.from_agent == format!("agent-{t}"))
            .map(|e| e.body.clone())
            .collect();
        let expected: Vec<String> = (0..per_task).map(|i| format!("{t}:{i}")).collect();
        assert_eq!(mine, expected);
    }
}
