//! Behaviour tests for `PalaceLinks` implementations (run them with
//! [`crate::palace_links_conformance!`]).
//!
//! A backend provides a [`LinksFactory`]: a fresh store seeded with tunnel and hallway records
//! in MemPalace 3.11's stored format, plus a way to open a second, independent handle on the
//! same storage (another process's view, for the concurrency tests).

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use mempalace_core::PalaceError;
use mempalace_core::palace_links::{
    NewTunnel, PalaceLinks, Tunnel, canonical_tunnel_id, hallway_page,
};
use serde_json::{Value, json};

/// Records a fresh store starts with, in 3.11's stored format.
#[derive(Debug, Clone, Default)]
pub struct LinksSeed {
    /// The elements of `tunnels.json`.
    pub tunnels: Vec<Value>,
    /// The elements of `hallways.json`'s `hallways` list.
    pub hallways: Vec<Value>,
}

/// A store under test plus whatever must live as long as it.
pub struct LinksFixture {
    /// The store under test.
    pub links: Arc<dyn PalaceLinks>,
    reopen: Box<dyn Fn() -> Arc<dyn PalaceLinks> + Send + Sync>,
    _keep_alive: Option<Box<dyn Any + Send + Sync>>,
}

impl LinksFixture {
    /// A fixture whose `reopen` opens another independent handle on the same storage.
    pub fn new(
        links: Arc<dyn PalaceLinks>,
        reopen: impl Fn() -> Arc<dyn PalaceLinks> + Send + Sync + 'static,
    ) -> Self {
        LinksFixture {
            links,
            reopen: Box::new(reopen),
            _keep_alive: None,
        }
    }

    /// Keeps `guard` (e.g. a `tempfile::TempDir`) alive as long as the fixture.
    pub fn with_guard(mut self, guard: impl Any + Send + Sync) -> Self {
        self._keep_alive = Some(Box::new(guard));
        self
    }

    /// Another handle on the same storage, created independently of `links`.
    pub fn reopen(&self) -> Arc<dyn PalaceLinks> {
        (self.reopen)()
    }
}

/// Makes fresh stores.
#[async_trait]
pub trait LinksFactory: Send + Sync {
    /// A new store holding exactly `seed`, sharing nothing with earlier ones.
    async fn create(&self, seed: LinksSeed) -> LinksFixture;
}

/// Hallway records as 3.11 writes them (`hallways._save_hallways` of records built like
/// `compute_hallways_for_wing`), plus one hand-edited record with a field 3.11 does not know.
pub fn hallway_records_311() -> Vec<Value> {
    let at = "2026-01-02T03:04:05.678901+00:00";
    let record = |id: &str, wing: &str, a: &str, b: &str, count: u64, rooms: Value, label: &str| {
        json!({"id": id, "wing": wing, "entity_a": a, "entity_b": b,
            "co_occurrence_count": count, "rooms": rooms, "label": label,
            "created_at": at, "created_by": "auto", "strength": 1.0, "stability": 1.0,
            "last_activated": at, "access_count": 0})
    };
    vec![
        record(
            "hallway_wing_code_ChatStore_RootView_86a48e3f",
            "wing_code",
            "ChatStore",
            "RootView",
            5,
            json!(["store", "ui"]),
            "ChatStore ↔ RootView (co-occur in 5 drawers across 2 rooms: store, ui)",
        ),
        record(
            "hallway_wing_code_Parser.c_lexer_6887845f",
            "wing_code",
            "Parser.c",
            "lexer",
            2,
            json!(["compiler"]),
            "Parser.c ↔ lexer (co-occur in 2 drawers across 1 room: compiler)",
        ),
        record(
            "hallway_wing_user_Aya_Lumi_e4646790",
            "wing_user",
            "Aya",
            "Lumi",
            47,
            json!(["diary", "ideas", "letters", "notes"]),
            "Aya ↔ Lumi (co-occur in 47 drawers across 4 rooms: diary, ideas, letters, +1 more)",
        ),
        record(
            "hallway_wing_user_Aya_consciousness_42bc0ad2",
            "wing_user",
            "Aya",
            "consciousness",
            19,
            json!([]),
            "Aya ↔ consciousness (co-occur in 19 drawers across no rooms: (no room tags))",
        ),
        json!({"id": "hand_made", "wing": "wing_code", "entity_a": "Clerk", "entity_b": "Auth0",
            "co_occurrence_count": 5, "note": "added by hand"}),
        json!("not a record"),
    ]
}

/// A tunnel record as 3.11 writes it, with fields this port does not know.
fn tunnel_record_311() -> Value {
    json!({
        "id": canonical_tunnel_id("project_api", "api-design", "project_database", "schema"),
        "source": {"wing": "project_api", "room": "api-design",
                   "drawer_id": "drawer_project_api_api-design_0123456789abcdef", "pinned": true},
        "target": {"wing": "project_database", "room": "schema"},
        "label": "API uses schema",
        "kind": "explicit",
        "created_at": "2026-01-02T03:04:05.678901+00:00",
        "strength": 1.05,
        "stability": 1.0,
        "last_activated": "2026-01-02T04:00:00+00:00",
        "access_count": 1,
        "reviewed_by": "agent-7"
    })
}

fn ids(tunnels: &[Tunnel]) -> Vec<String> {
    tunnels.iter().map(|t| t.id.clone()).collect()
}

fn is_invalid(err: PalaceError, field: &str) -> bool {
    matches!(err, PalaceError::InvalidInput { field: f, .. } if f == field)
}

/// Reads of a store without records return empty; deletes and traversals find nothing.
pub async fn empty_store_reads_empty<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let links = &fx.links;
    assert!(links.list_tunnels().await.unwrap().is_empty());
    assert!(links.list_hallways(None).await.unwrap().is_empty());
    assert!(
        links
            .list_hallways(Some("wing_code"))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!links.delete_tunnel("31639cdab7ed3839").await.unwrap());
    assert!(!links.delete_hallway("hallway_x").await.unwrap());
    assert_eq!(
        links
            .record_traversals(&["31639cdab7ed3839".into()])
            .await
            .unwrap(),
        0
    );
    assert!(links.list_tunnels().await.unwrap().is_empty());
}

/// A→B and B→A are one tunnel with 3.11's canonical id; the stored record follows the last
/// caller's endpoint order.
pub async fn upsert_is_symmetric<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let links = &fx.links;
    let ab = links
        .upsert_tunnel(NewTunnel::new("wing_code", "auth", "wing_team", "auth").with_label("x"))
        .await
        .unwrap();
    assert_eq!(ab.id, "31639cdab7ed3839");
    assert_eq!(ab.kind, "explicit");
    assert_eq!(ab.strength, Some(1.0));
    assert_eq!(ab.stability, Some(1.0));
    assert_eq!(ab.access_count, Some(0));
    assert_eq!(ab.last_activated.as_deref(), Some(ab.created_at.as_str()));
    assert_eq!(ab.updated_at, None);
    let ba = links
        .upsert_tunnel(NewTunnel::new("wing_team", "auth", "wing_code", "auth").with_label("y"))
        .await
        .unwrap();
    assert_eq!(ba.id, ab.id);
    let all = links.list_tunnels().await.unwrap();
    assert_eq!(ids(&all), vec![ab.id.clone()]);
    assert_eq!(all[0], ba);
    assert_eq!(all[0].source.wing, "wing_team");
    assert_eq!(all[0].target.wing, "wing_code");
    // Endpoints are compared verbatim: another spelling of a wing is another tunnel.
    let other = links
        .upsert_tunnel(NewTunnel::new("wing-code", "auth", "wing_team", "auth"))
        .await
        .unwrap();
    assert_ne!(other.id, ab.id);
    assert_eq!(links.list_tunnels().await.unwrap().len(), 2);
}

/// Re-creating a tunnel updates label, kind and drawer ids, keeps `created_at` and the dynamics,
/// and sets `updated_at`.
pub async fn label_update_keeps_created_at_and_dynamics<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let links = &fx.links;
    let first = links
        .upsert_tunnel(
            NewTunnel::new("project_api", "api-design", "project_database", "schema")
                .with_label("old")
                .with_drawer_ids(Some("drawer_a".into()), None),
        )
        .await
        .unwrap();
    assert_eq!(first.source.drawer_id.as_deref(), Some("drawer_a"));
    assert_eq!(first.target.drawer_id, None);
    assert_eq!(
        links
            .record_traversals(std::slice::from_ref(&first.id))
            .await
            .unwrap(),
        1
    );
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let second = links
        .upsert_tunnel(
            NewTunnel::new("project_api", "api-design", "project_database", "schema")
                .with_label("new")
                .with_drawer_ids(None, Some("drawer_b".into())),
        )
        .await
        .unwrap();
    assert_eq!(second.label, "new");
    assert_eq!(second.created_at, first.created_at);
    let updated = second.updated_at.clone().expect("updated_at is set");
    assert!(
        updated > first.created_at,
        "{updated} after {}",
        first.created_at
    );
    assert_eq!(second.access_count, Some(1));
    assert_eq!(second.strength, Some(1.05));
    assert_ne!(
        second.last_activated.as_deref(),
        Some(first.created_at.as_str())
    );
    // As 3.11: the re-created record carries the drawer ids of this call only.
    assert_eq!(second.source.drawer_id, None);
    assert_eq!(second.target.drawer_id.as_deref(), Some("drawer_b"));
    assert_eq!(links.list_tunnels().await.unwrap(), vec![second]);
}

/// Tunnels list in creation order; delete reports whether the id existed; a blank id is
/// rejected and changes nothing.
pub async fn list_and_delete<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let links = &fx.links;
    let mut made = Vec::new();
    for (a, b) in [("w1", "w2"), ("w2", "w3"), ("w3", "w1")] {
        made.push(
            links
                .upsert_tunnel(NewTunnel::new(a, "room", b, "room"))
                .await
                .unwrap()
                .id,
        );
    }
    assert_eq!(ids(&links.list_tunnels().await.unwrap()), made);
    assert!(links.delete_tunnel(&made[1]).await.unwrap());
    assert!(!links.delete_tunnel(&made[1]).await.unwrap());
    assert_eq!(
        ids(&links.list_tunnels().await.unwrap()),
        vec![made[0].clone(), made[2].clone()]
    );
    assert!(is_invalid(
        links.delete_tunnel("").await.unwrap_err(),
        "tunnel_id"
    ));
    assert!(!links.delete_tunnel("no-such-id").await.unwrap());
    assert_eq!(links.list_tunnels().await.unwrap().len(), 2);
}

/// Raw records come back as stored (odd values included), and an edit rewrites them in one
/// go: what the edit keeps is what a second handle then reads; an edit that says it changed
/// nothing writes nothing.
pub async fn raw_records_and_edits<F: LinksFactory + ?Sized>(factory: &F) {
    let odd = json!({"id": "odd", "source": {"wing": 5}, "target": null, "access_count": "2"});
    let fx = factory
        .create(LinksSeed {
            tunnels: vec![odd.clone()],
            ..LinksSeed::default()
        })
        .await;
    let links = &fx.links;
    links
        .upsert_tunnel(NewTunnel::new("w1", "room", "w2", "room"))
        .await
        .unwrap();
    let records = links.tunnel_records().await.unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0], odd, "an unreadable tunnel is still a record");
    links
        .edit_tunnel_records(Box::new(|records| {
            records.retain(|r| r["id"] != "odd");
            true
        }))
        .await
        .unwrap();
    let other = fx.reopen();
    let left = other.tunnel_records().await.unwrap();
    assert_eq!(left.len(), 1);
    assert_ne!(left[0]["id"], "odd");
    links
        .edit_hallway_records(Box::new(|records| {
            records.clear();
            false
        }))
        .await
        .unwrap();
    assert_eq!(
        other.hallway_records().await.unwrap().len(),
        links.hallway_records().await.unwrap().len(),
        "both handles see one state"
    );
}

/// Blank endpoints are rejected as 3.11 rejects them, and nothing is written.
pub async fn bad_input_writes_nothing<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let links = &fx.links;
    links
        .upsert_tunnel(NewTunnel::new("w1", "r", "w2", "r"))
        .await
        .unwrap();
    let before = links.list_tunnels().await.unwrap();
    for (new, field) in [
        (NewTunnel::new("", "r", "w2", "r"), "source_wing"),
        (NewTunnel::new("w1", "  ", "w2", "r"), "source_room"),
        (NewTunnel::new("w1", "r", "\t", "r"), "target_wing"),
        (NewTunnel::new("w1", "r", "w2", ""), "target_room"),
    ] {
        assert!(is_invalid(
            links.upsert_tunnel(new).await.unwrap_err(),
            field
        ));
    }
    assert_eq!(links.list_tunnels().await.unwrap(), before);
    // Names are trimmed before the id is computed.
    let padded = links
        .upsert_tunnel(NewTunnel::new(" w1 ", "r ", "w2", " r"))
        .await
        .unwrap();
    assert_eq!(padded.id, before[0].id);
    assert_eq!(links.list_tunnels().await.unwrap().len(), 1);
}

/// Recording traversals potentiates each named tunnel once per call (duplicates and blank ids
/// ignored, unknown ids not counted) and returns how many were touched.
pub async fn traversals_are_counted<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let links = &fx.links;
    let a = links
        .upsert_tunnel(NewTunnel::new("w1", "r", "w2", "r"))
        .await
        .unwrap();
    let b = links
        .upsert_tunnel(NewTunnel::new("w1", "r", "w3", "r"))
        .await
        .unwrap();
    assert_eq!(links.record_traversals(&[]).await.unwrap(), 0);
    assert_eq!(links.record_traversals(&[String::new()]).await.unwrap(), 0);
    let touched = links
        .record_traversals(&[a.id.clone(), a.id.clone(), "unknown".into(), String::new()])
        .await
        .unwrap();
    assert_eq!(touched, 1);
    assert_eq!(
        links
            .record_traversals(&[a.id.clone(), b.id.clone()])
            .await
            .unwrap(),
        2
    );
    let all = links.list_tunnels().await.unwrap();
    let (ta, tb) = (&all[0], &all[1]);
    assert_eq!(ta.access_count, Some(2));
    assert_eq!(ta.strength, Some(1.1));
    assert_eq!(tb.access_count, Some(1));
    assert_eq!(tb.strength, Some(1.05));
    // Traversals within the hour are massed practice: stability does not grow.
    assert_eq!(ta.stability, Some(1.0));
    assert_ne!(ta.last_activated.as_deref(), Some(ta.created_at.as_str()));
    assert_eq!(ta.created_at, a.created_at);
}

/// Records written by 3.11 keep fields this port does not know through upserts, traversals and
/// deletes of other records.
pub async fn unknown_fields_survive_rewrites<F: LinksFactory + ?Sized>(factory: &F) {
    let stored = tunnel_record_311();
    let fx = factory
        .create(LinksSeed {
            tunnels: vec![stored.clone(), json!({"id": "broken", "source": null})],
            hallways: Vec::new(),
        })
        .await;
    let links = &fx.links;
    let listed = links.list_tunnels().await.unwrap();
    assert_eq!(
        listed.len(),
        1,
        "the malformed record is skipped, not fatal"
    );
    assert_eq!(serde_json::to_value(&listed[0]).unwrap(), stored);
    let other = links
        .upsert_tunnel(NewTunnel::new("w1", "r", "w2", "r"))
        .await
        .unwrap();
    assert!(links.delete_tunnel(&other.id).await.unwrap());
    assert_eq!(
        serde_json::to_value(&links.list_tunnels().await.unwrap()[0]).unwrap(),
        stored
    );
    assert_eq!(
        links
            .record_traversals(&[listed[0].id.clone(), "broken".into()])
            .await
            .unwrap(),
        2
    );
    let after = &links.list_tunnels().await.unwrap()[0];
    assert_eq!(after.extra.get("reviewed_by"), Some(&json!("agent-7")));
    assert_eq!(after.source.extra.get("pinned"), Some(&json!(true)));
    assert_eq!(after.access_count, Some(2));
    assert_eq!(after.strength, Some(1.1));
    // More than an hour after the stored last activation: spaced, stability grows.
    assert_eq!(after.stability, Some(1.1));
    assert!(links.delete_tunnel("broken").await.unwrap());
}

/// Hallways written by 3.11 list (all, one wing), page strongest first and delete by id.
pub async fn hallways_list_page_delete<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory
        .create(LinksSeed {
            tunnels: Vec::new(),
            hallways: hallway_records_311(),
        })
        .await;
    let links = &fx.links;
    let all = links.list_hallways(None).await.unwrap();
    assert_eq!(all.len(), 5, "the non-object record is skipped");
    assert_eq!(
        serde_json::to_value(&all[0]).unwrap(),
        hallway_records_311()[0]
    );
    assert_eq!(all[4].extra.get("note"), Some(&json!("added by hand")));
    assert!(all[4].rooms.is_empty() && all[4].created_at.is_none());
    let code = links.list_hallways(Some("wing_code")).await.unwrap();
    assert_eq!(code.len(), 3);
    // Wing filters are verbatim, as in 3.11.
    assert!(
        links
            .list_hallways(Some("wing-code"))
            .await
            .unwrap()
            .is_empty()
    );
    let page = hallway_page(all.clone(), Some(3), Some(0));
    let page_ids: Vec<&str> = page.hallways.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(
        page_ids,
        [
            "hallway_wing_user_Aya_Lumi_e4646790",
            "hallway_wing_user_Aya_consciousness_42bc0ad2",
            "hallway_wing_code_ChatStore_RootView_86a48e3f",
        ]
    );
    assert_eq!(
        (page.total, page.count, page.offset, page.limit),
        (5, 3, 0, 3)
    );
    let rest = hallway_page(all, Some(3), Some(3));
    let rest_ids: Vec<&str> = rest.hallways.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(
        rest_ids,
        ["hand_made", "hallway_wing_code_Parser.c_lexer_6887845f"]
    );
    assert!(
        links
            .delete_hallway("hallway_wing_code_Parser.c_lexer_6887845f")
            .await
            .unwrap()
    );
    assert!(
        !links
            .delete_hallway("hallway_wing_code_Parser.c_lexer_6887845f")
            .await
            .unwrap()
    );
    assert!(is_invalid(
        links.delete_hallway("").await.unwrap_err(),
        "hallway_id"
    ));
    let left = links.list_hallways(Some("wing_code")).await.unwrap();
    assert_eq!(left.len(), 2);
    assert_eq!(left[1].id, "hand_made");
    assert_eq!(left[1].extra.get("note"), Some(&json!("added by hand")));
    assert_eq!(links.list_hallways(None).await.unwrap().len(), 4);
}

/// Upserts from many tasks on one handle, and from several independently opened handles on
/// the same storage, all land.
pub async fn concurrent_upserts_all_land<F: LinksFactory + ?Sized>(factory: &F) {
    let fx = factory.create(LinksSeed::default()).await;
    let mut handles: Vec<Arc<dyn PalaceLinks>> = vec![Arc::clone(&fx.links)];
    handles.extend((0..3).map(|_| fx.reopen()));
    let mut tasks = Vec::new();
    for (h, links) in handles.iter().enumerate() {
        for t in 0..6 {
            let links = Arc::clone(links);
            tasks.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..4 {
                    let tunnel = links
                        .upsert_tunnel(
                            NewTunnel::new(
                                format!("wing_{h}_{t}"),
                                format!("room{i}"),
                                "shared",
                                "hub",
                            )
                            .with_label(format!("{h}/{t}/{i}")),
                        )
                        .await
                        .unwrap();
                    ids.push(tunnel.id);
                }
                // Every task also re-creates one shared tunnel and traverses it.
                let shared = links
                    .upsert_tunnel(NewTunnel::new("shared", "hub", "shared", "spoke"))
                    .await
                    .unwrap();
                links
                    .record_traversals(std::slice::from_ref(&shared.id))
                    .await
                    .unwrap();
                ids
            }));
        }
    }
    let mut expected = Vec::new();
    for task in futures::future::join_all(tasks).await {
        expected.extend(task.unwrap());
    }
    expected.push(canonical_tunnel_id("shared", "hub", "shared", "spoke"));
    expected.sort();
    for links in &handles {
        let mut listed = ids(&links.list_tunnels().await.unwrap());
        listed.sort();
        assert_eq!(listed, expected);
    }
    let shared = fx
        .links
        .list_tunnels()
        .await
        .unwrap()
        .into_iter()
        .find(|t| t.target.room == "spoke")
        .unwrap();
    assert_eq!(shared.access_count, Some(4 * 6), "every traversal landed");
}

/// Generates one `#[tokio::test]` per `PalaceLinks` behaviour for a [`LinksFactory`] value. The
/// calling crate needs `tokio` (with `macros` and `rt-multi-thread`) as a dev-dependency.
/// `requires = "VAR"` gates each test on a server address as
/// [`vector_store_conformance!`](crate::vector_store_conformance) does.
#[macro_export]
macro_rules! palace_links_conformance {
    ($factory:expr $(, requires = $var:literal)?) => {
        $crate::palace_links_conformance!(@tests $factory, [$($var)?];
            empty_store_reads_empty, upsert_is_symmetric, label_update_keeps_created_at_and_dynamics,
            list_and_delete, bad_input_writes_nothing, traversals_are_counted,
            unknown_fields_survive_rewrites, hallways_list_page_delete, concurrent_upserts_all_land,
            raw_records_and_edits);
    };
    (@tests $factory:expr, $requires:tt; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if !$crate::vector_store_conformance!(@available $requires, $name) {
                    return;
                }
                $crate::palace_links_suite::$name(&$factory).await;
            }
        )*
    };
}
