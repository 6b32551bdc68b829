//! Behaviour tests for `ClosetIndex` implementations (run them with
//! [`crate::closet_index_conformance!`]). [`mempalace_core::closets::MemoryClosets`] is the
//! reference: words match anywhere in a closet line, case-insensitively; scoped results come in
//! filing order.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use mempalace_core::closets::{Closet, ClosetIndex, ClosetMove, ClosetScope};

/// An index under test plus whatever must live as long as it.
pub struct ClosetFixture {
    /// The index under test.
    pub index: Arc<dyn ClosetIndex>,
    _keep_alive: Option<Box<dyn Any + Send + Sync>>,
}

impl ClosetFixture {
    /// A fixture for `index`.
    pub fn new(index: Arc<dyn ClosetIndex>) -> Self {
        ClosetFixture {
            index,
            _keep_alive: None,
        }
    }

    /// Keeps `guard` (e.g. a `tempfile::TempDir`) alive as long as the fixture.
    pub fn with_guard(mut self, guard: impl Any + Send + Sync) -> Self {
        self._keep_alive = Some(Box::new(guard));
        self
    }
}

/// Makes fresh, empty indexes.
#[async_trait]
pub trait ClosetFactory: Send + Sync {
    /// A new empty index sharing nothing with earlier ones.
    async fn create(&self) -> ClosetFixture;
}

/// A closet in wing `w`, room `r`.
pub fn closet(id: &str, text: &str, source: &str) -> Closet {
    Closet {
        id: id.into(),
        text: text.into(),
        wing: "w".into(),
        room: "r".into(),
        source_file: source.into(),
    }
}

fn words(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| w.to_string()).collect()
}

fn ids(closets: &[Closet]) -> Vec<&str> {
    closets.iter().map(|c| c.id.as_str()).collect()
}

/// An empty index finds nothing and counts nothing; no words find nothing.
pub async fn empty_index_finds_nothing(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    assert_eq!(fx.index.count().await.unwrap(), 0);
    let all = ClosetScope::default();
    assert!(
        fx.index
            .containing_any(&words(&["tomatoes"]), &all, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        fx.index
            .delete_for_sources(&words(&["/a.md"]))
            .await
            .unwrap(),
        0
    );
    fx.index
        .upsert(&[closet("c1", "tomatoes", "/a.md")])
        .await
        .unwrap();
    assert!(
        fx.index
            .containing_any(&[], &all, 10)
            .await
            .unwrap()
            .is_empty(),
        "no words, no closets"
    );
}

/// A word matches anywhere in the line (inside longer words, across `-` and `;`), whatever
/// the case; a closet with none of the words is not found.
pub async fn words_match_anywhere_whatever_the_case(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    fx.index
        .upsert(&[
            closet("c1", "garden notes|Tomatoes;Staking|→drawer_a", "/a.md"),
            closet("c2", "auth notes|GPT-4;Clerk|→drawer_b", "/b.md"),
            closet("c3", "ÉTÉ notes|Überraschung", "/c.md"),
        ])
        .await
        .unwrap();
    let all = ClosetScope::default();
    let found = |ws: &'static [&'static str]| {
        let index = Arc::clone(&fx.index);
        let all = all.clone();
        async move { index.containing_any(&words(ws), &all, 10).await.unwrap() }
    };
    assert_eq!(ids(&found(&["tomato"]).await), vec!["c1"]);
    assert_eq!(ids(&found(&["gpt"]).await), vec!["c2"]);
    assert_eq!(ids(&found(&["ote"]).await).len(), 3, "inside a word");
    assert_eq!(ids(&found(&["clerk", "staking"]).await).len(), 2);
    assert_eq!(ids(&found(&["überraschung"]).await), vec!["c3"]);
    assert!(found(&["compost"]).await.is_empty());
}

/// Upserting an id again replaces the closet (its old words no longer find it).
pub async fn upsert_replaces_same_id(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    fx.index
        .upsert(&[closet("c1", "tomatoes", "/a.md")])
        .await
        .unwrap();
    fx.index
        .upsert(&[closet("c1", "compost", "/b.md")])
        .await
        .unwrap();
    assert_eq!(fx.index.count().await.unwrap(), 1);
    let all = ClosetScope::default();
    assert!(
        fx.index
            .containing_any(&words(&["tomatoes"]), &all, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let found = fx
        .index
        .containing_any(&words(&["compost"]), &all, 10)
        .await
        .unwrap();
    assert_eq!(found, vec![closet("c1", "compost", "/b.md")]);
}

/// Wing, room and source file narrow the closets; scoped results come in filing order.
pub async fn scope_filters_and_keeps_filing_order(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    let mut elsewhere = closet("c2", "tomatoes", "/b.md");
    elsewhere.wing = "x".into();
    let mut other_room = closet("c3", "tomatoes", "/c.md");
    other_room.room = "s".into();
    fx.index
        .upsert(&[
            closet("c4", "tomatoes tomatoes tomatoes", "/d.md"),
            elsewhere,
            other_room,
            closet("c1", "tomatoes", "/a.md"),
        ])
        .await
        .unwrap();
    let w = ["tomatoes"];
    let in_scope = |scope: ClosetScope| {
        let index = Arc::clone(&fx.index);
        async move { index.containing_any(&words(&w), &scope, 10).await.unwrap() }
    };
    let wing = ClosetScope {
        wing: Some("w".into()),
        ..ClosetScope::default()
    };
    assert_eq!(ids(&in_scope(wing.clone()).await), vec!["c4", "c3", "c1"]);
    let room = ClosetScope {
        room: Some("r".into()),
        ..wing
    };
    assert_eq!(ids(&in_scope(room).await), vec!["c4", "c1"]);
    let source = ClosetScope {
        source_file: Some("/a.md".into()),
        ..ClosetScope::default()
    };
    assert_eq!(ids(&in_scope(source).await), vec!["c1"]);
}

/// An unscoped search keeps at most `cap` closets.
pub async fn unscoped_search_keeps_cap(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    let many: Vec<Closet> = (0..12)
        .map(|i| closet(&format!("c{i:02}"), "tomatoes", &format!("/{i}.md")))
        .collect();
    fx.index.upsert(&many).await.unwrap();
    let found = fx
        .index
        .containing_any(&words(&["tomatoes"]), &ClosetScope::default(), 5)
        .await
        .unwrap();
    assert_eq!(found.len(), 5);
    let scoped = fx
        .index
        .containing_any(
            &words(&["tomatoes"]),
            &ClosetScope {
                wing: Some("w".into()),
                ..ClosetScope::default()
            },
            5,
        )
        .await
        .unwrap();
    assert_eq!(scoped.len(), 12, "the cap is for unscoped searches only");
}

/// Deleting a source's closets leaves the others.
pub async fn delete_for_sources_leaves_the_rest(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    fx.index
        .upsert(&[
            closet("c1", "tomatoes", "/a.md"),
            closet("c2", "tomatoes", "/a.md"),
            closet("c3", "tomatoes", "/b.md"),
        ])
        .await
        .unwrap();
    assert_eq!(
        fx.index
            .delete_for_sources(&words(&["/a.md", "/none.md"]))
            .await
            .unwrap(),
        2
    );
    assert_eq!(fx.index.count().await.unwrap(), 1);
    let left = fx
        .index
        .containing_any(&words(&["tomatoes"]), &ClosetScope::default(), 10)
        .await
        .unwrap();
    assert_eq!(ids(&left), vec!["c3"]);
}

/// `relocate_sources` gives a source file's closets in one wing a new wing (rooms kept);
/// the file's closets in other wings, and other files' closets, stay.
pub async fn relocate_sources_moves_a_files_closets(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    let mut other_wing = closet("c4", "tomatoes", "/a.md");
    other_wing.wing = "elsewhere".into();
    fx.index
        .upsert(&[
            closet("c1", "tomatoes", "/a.md"),
            closet("c2", "tomatoes", "/a.md"),
            closet("c3", "tomatoes", "/b.md"),
            other_wing,
        ])
        .await
        .unwrap();
    let moves = [
        ClosetMove {
            source_file: "/a.md".into(),
            from_wing: "w".into(),
            wing: "garden's".into(),
            from_room: None,
            room: None,
        },
        ClosetMove {
            source_file: "/none.md".into(),
            from_wing: "w".into(),
            wing: "x".into(),
            from_room: None,
            room: None,
        },
    ];
    assert_eq!(fx.index.relocate_sources(&moves).await.unwrap(), 2);
    let in_scope = |wing: &str| ClosetScope {
        wing: Some(wing.into()),
        room: Some("r".into()),
        source_file: None,
    };
    let find = |scope: ClosetScope| {
        let index = &fx.index;
        async move {
            index
                .containing_any(&words(&["tomatoes"]), &scope, 10)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        ids(&find(in_scope("garden's")).await),
        vec!["c1", "c2"],
        "room kept"
    );
    assert_eq!(ids(&find(in_scope("w")).await), vec!["c3"]);
    let elsewhere = ClosetScope {
        wing: Some("elsewhere".into()),
        ..Default::default()
    };
    assert_eq!(
        ids(&find(elsewhere).await),
        vec!["c4"],
        "another wing's closet stays"
    );
    // A room move: only the closets of that room, and they take the new room.
    let mut second_room = closet("c5", "tomatoes", "/b.md");
    second_room.room = "other".into();
    fx.index.upsert(&[second_room]).await.unwrap();
    let room_move = ClosetMove {
        source_file: "/b.md".into(),
        from_wing: "w".into(),
        wing: "w".into(),
        from_room: Some("r".into()),
        room: Some("beds".into()),
    };
    assert_eq!(fx.index.relocate_sources(&[room_move]).await.unwrap(), 1);
    let beds = ClosetScope {
        wing: Some("w".into()),
        room: Some("beds".into()),
        source_file: None,
    };
    assert_eq!(ids(&find(beds).await), vec!["c3"]);
    let other = ClosetScope {
        wing: Some("w".into()),
        room: Some("other".into()),
        source_file: None,
    };
    assert_eq!(
        ids(&find(other).await),
        vec!["c5"],
        "the file's closet in another room stays"
    );
    assert_eq!(fx.index.relocate_sources(&[]).await.unwrap(), 0);
}

/// Quotes, query syntax and SQL in words and scope values are plain text.
pub async fn hostile_words_and_scopes_are_literal(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    let mut odd = closet(
        "c1",
        "say \"hi\" OR NEAR(x y) *star* it's",
        "/a'; DROP TABLE x;--.md",
    );
    odd.wing = "w\"x".into();
    fx.index
        .upsert(&[odd.clone(), closet("c2", "plain", "/b.md")])
        .await
        .unwrap();
    let all = ClosetScope::default();
    for w in ["\"hi\"", "near(x", "*star*", "it's", "or near"] {
        let found = fx
            .index
            .containing_any(&words(&[w]), &all, 10)
            .await
            .unwrap();
        assert_eq!(ids(&found), vec!["c1"], "{w}");
    }
    let scope = ClosetScope {
        wing: Some("w\"x".into()),
        source_file: Some("/a'; DROP TABLE x;--.md".into()),
        ..ClosetScope::default()
    };
    let found = fx
        .index
        .containing_any(&words(&["say"]), &scope, 10)
        .await
        .unwrap();
    assert_eq!(found, vec![odd]);
    assert_eq!(fx.index.count().await.unwrap(), 2);
}

/// Upserts from many tasks at once all land.
pub async fn concurrent_upserts_all_land(factory: &dyn ClosetFactory) {
    let fx = factory.create().await;
    let mut tasks = Vec::new();
    for t in 0..4 {
        let index = Arc::clone(&fx.index);
        tasks.push(tokio::spawn(async move {
            for i in 0..10 {
                index
                    .upsert(&[closet(
                        &format!("c{t}_{i}"),
                        "tomatoes",
                        &format!("/{t}.md"),
                    )])
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(fx.index.count().await.unwrap(), 40);
}

/// Generates one `#[tokio::test]` per `ClosetIndex` behaviour for a [`ClosetFactory`] value.
/// The calling crate needs `tokio` (with `macros` and `rt-multi-thread`) as a dev-dependency.
/// `requires = "VAR"` gates each test on a server address as
/// [`vector_store_conformance!`](crate::vector_store_conformance) does.
#[macro_export]
macro_rules! closet_index_conformance {
    ($factory:expr $(, requires = $var:literal)?) => {
        $crate::closet_index_conformance!(@tests $factory, [$($var)?];
            empty_index_finds_nothing, words_match_anywhere_whatever_the_case,
            upsert_replaces_same_id, scope_filters_and_keeps_filing_order,
            unscoped_search_keeps_cap, delete_for_sources_leaves_the_rest,
            hostile_words_and_scopes_are_literal, concurrent_upserts_all_land,
            relocate_sources_moves_a_files_closets);
    };
    (@tests $factory:expr, $requires:tt; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if !$crate::vector_store_conformance!(@available $requires, $name) {
                    return;
                }
                $crate::closet_index_suite::$name(&$factory).await;
            }
        )*
    };
}
