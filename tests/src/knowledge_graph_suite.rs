//! Behaviour tests for `KnowledgeGraph` implementations (run them with
//! [`crate::knowledge_graph_conformance!`]).

use std::sync::Arc;

use mempalace_core::knowledge_graph::Supersede;
use mempalace_core::{
    Direction, EntityCandidate, Fact, KnowledgeGraph, NewEntity, NewTriple, Page, PalaceError,
};

use crate::fixtures::KgFactory;

fn summary(facts: &[Fact]) -> Vec<(String, String, String)> {
    facts
        .iter()
        .map(|f| (f.subject.clone(), f.predicate.clone(), f.object.clone()))
        .collect()
}

fn triple(s: &str, p: &str, o: &str) -> (String, String, String) {
    (s.into(), p.into(), o.into())
}

/// Reads of a graph that was never written return empty results and create nothing.
pub async fn fresh_graph_reads_create_nothing<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    assert!(!kg.exists().await.unwrap());
    assert!(
        kg.query_entity("Clerk", None, Direction::Both)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        kg.query_relationship("uses", None)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(kg.timeline(None, Page::first(10)).await.unwrap().is_empty());
    assert_eq!(kg.stats().await.unwrap().triples, 0);
    assert_eq!(kg.invalidate("a", "b", "c", None).await.unwrap(), 0);
    assert!(
        !kg.exists().await.unwrap(),
        "reads must not create the graph"
    );
    kg.create_if_missing().await.unwrap();
    kg.create_if_missing().await.unwrap();
    assert!(kg.exists().await.unwrap());
}

/// The design's example: outgoing, incoming and both directions with display names.
pub async fn query_both_directions<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("Clerk", "replaces", "Auth0").valid_from("2026-01-10"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("MyProject", "uses", "Clerk").source_closet("drawer_x"))
        .await
        .unwrap();
    let out = kg
        .query_entity("clerk", None, Direction::Outgoing)
        .await
        .unwrap();
    // As 3.11: the entity's side carries the name asked for, the other side its stored name.
    assert_eq!(summary(&out), vec![triple("clerk", "replaces", "Auth0")]);
    assert_eq!(out[0].direction, Some(Direction::Outgoing));
    assert_eq!(out[0].valid_from.as_deref(), Some("2026-01-10"));
    assert!(out[0].current && out[0].valid_to.is_none());
    assert_eq!(out[0].confidence, 1.0);
    let inc = kg
        .query_entity("Clerk", None, Direction::Incoming)
        .await
        .unwrap();
    assert_eq!(summary(&inc), vec![triple("MyProject", "uses", "Clerk")]);
    assert_eq!(inc[0].direction, Some(Direction::Incoming));
    assert_eq!(inc[0].source_closet.as_deref(), Some("drawer_x"));
    let both = kg
        .query_entity("CLERK", None, Direction::Both)
        .await
        .unwrap();
    assert_eq!(both.len(), 2);
    assert_eq!(both[0].direction, Some(Direction::Outgoing));
    assert_eq!(both[1].direction, Some(Direction::Incoming));
    let spaced = kg
        .add_triple(&NewTriple::new("My Project", "Depends On", "tokio-rs"))
        .await
        .unwrap();
    assert!(!spaced.is_empty());
    let f = kg
        .query_entity("my_project", None, Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(
        summary(&f),
        vec![triple("my_project", "depends_on", "tokio-rs")]
    );
    assert_eq!(
        kg.query_entity("Tokio-RS", None, Direction::Incoming)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        kg.query_entity("Tokio RS", None, Direction::Incoming)
            .await
            .unwrap()
            .is_empty(),
        "hyphens are kept in ids (3.11): tokio-rs is not tokio_rs"
    );
}

/// as_of: the day before valid_from, the day itself, the day of valid_to, and after it.
pub async fn as_of_boundaries<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(
        &NewTriple::new("Alice", "works_at", "Acme")
            .valid_from("2024-03-01")
            .valid_to("2025-06-30"),
    )
    .await
    .unwrap();
    kg.add_triple(&NewTriple::new("Alice", "works_at", "Globex").valid_from("2025-07-01"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("Alice", "lives_in", "Paris").valid_from("2025-07-01T12:00:00Z"))
        .await
        .unwrap();
    let at = |d: &'static str| {
        let kg = Arc::clone(kg);
        async move {
            let mut objs: Vec<String> = kg
                .query_entity("Alice", Some(d), Direction::Outgoing)
                .await
                .unwrap()
                .into_iter()
                .map(|f| f.object)
                .collect();
            objs.sort();
            objs
        }
    };
    assert!(
        at("2024-02-29").await.is_empty(),
        "the day before valid_from"
    );
    assert_eq!(at("2024-03-01").await, vec!["Acme"], "valid_from's own day");
    assert_eq!(
        at("2025-06-30").await,
        vec!["Acme"],
        "valid_to's own day is still valid"
    );
    assert_eq!(at("2025-06-30T23:59:58Z").await, vec!["Acme"]);
    assert!(
        at("2025-06-30T23:59:59Z").await.is_empty(),
        "a date valid_to ends at its last second, exclusive (3.11's half-open interval)"
    );
    assert_eq!(
        at("2025-07-01").await,
        vec!["Globex"],
        "the day after valid_to; a date as_of is its first second, before the timestamp start"
    );
    assert_eq!(
        at("2025-07-01T11:59:59Z").await,
        vec!["Globex"],
        "before the timestamp start"
    );
    assert_eq!(
        at("2025-07-01T12:00:00+00:00").await,
        vec!["Globex", "Paris"],
        "+00:00 reads as Z"
    );
    assert_eq!(at("2030-01-01").await, vec!["Globex", "Paris"]);
    for bad in [
        "next tuesday",
        "2025",
        "2025-07",
        "2025-07-01T12:00:00",
        "2025-07-01T14:00:00+02:00",
    ] {
        assert!(
            matches!(
                kg.query_entity("Alice", Some(bad), Direction::Both).await,
                Err(PalaceError::InvalidInput { field: "as_of", .. })
            ),
            "{bad} is not a form 3.11 accepts"
        );
    }
}

/// invalidate sets valid_to on the open fact and keeps it as history.
pub async fn invalidate_closes_without_deleting<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("Max", "plays", "chess").valid_from("2020-01-01"))
        .await
        .unwrap();
    assert_eq!(
        kg.invalidate("Max", "plays", "chess", Some("2025-03-01"))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        kg.invalidate("Max", "plays", "chess", Some("2025-04-01"))
            .await
            .unwrap(),
        0,
        "already closed"
    );
    let facts = kg.query_entity("Max", None, Direction::Both).await.unwrap();
    assert_eq!(facts.len(), 1, "invalidate never deletes");
    assert_eq!(facts[0].valid_to.as_deref(), Some("2025-03-01"));
    assert!(!facts[0].current);
    assert_eq!(
        kg.query_entity("Max", Some("2025-03-01"), Direction::Both)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        kg.query_entity("Max", Some("2025-03-02"), Direction::Both)
            .await
            .unwrap()
            .is_empty()
    );
    kg.add_triple(&NewTriple::new("Max", "plays", "go").valid_from("2025-01-01"))
        .await
        .unwrap();
    assert!(
        kg.invalidate("Max", "plays", "go", Some("2024-12-31"))
            .await
            .is_err(),
        "cannot end before it started"
    );
    assert!(
        kg.query_entity("Max", None, Direction::Outgoing)
            .await
            .unwrap()
            .iter()
            .any(|f| f.object == "go" && f.current)
    );
    assert_eq!(
        kg.invalidate("Max", "plays", "go", None).await.unwrap(),
        1,
        "default end: today"
    );
    let stats = kg.stats().await.unwrap();
    assert_eq!((stats.current_facts, stats.expired_facts), (0, 2));
}

/// supersede closes the old value and opens the new one at one shared instant (3.11): no
/// instant sees both; a date is its first second; without a current old value it is an add,
/// and with the new value already current it changes nothing more.
pub async fn supersede_leaves_no_overlap<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("MyProject", "uses", "Auth0").valid_from("2024-01-01"))
        .await
        .unwrap();
    let change = Supersede {
        subject: "MyProject".into(),
        predicate: "uses".into(),
        old_object: "Auth0".into(),
        new_object: "Clerk".into(),
        at: Some("2026-01-15".into()),
        confidence: 0.9,
        source_closet: None,
    };
    let done = kg.supersede(&change).await.unwrap();
    assert_eq!(done.old_valid_to, "2026-01-15T00:00:00Z");
    assert_eq!(done.new_valid_from, "2026-01-15T00:00:00Z");
    for (instant, value) in [
        ("2025-12-31", "Auth0"),
        ("2026-01-14T23:59:59Z", "Auth0"),
        ("2026-01-15", "Clerk"),
        ("2026-01-15T00:00:00Z", "Clerk"),
        ("2026-01-16", "Clerk"),
    ] {
        let facts = kg
            .query_entity("MyProject", Some(instant), Direction::Outgoing)
            .await
            .unwrap();
        assert_eq!(facts.len(), 1, "exactly one value at {instant}: {facts:?}");
        assert_eq!(facts[0].object, value, "at {instant}");
    }
    let current: Vec<_> = kg
        .query_entity("MyProject", None, Direction::Outgoing)
        .await
        .unwrap()
        .into_iter()
        .filter(|f| f.current)
        .collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].confidence, 0.9);

    // Again: Clerk is already current, so the same triple comes back and nothing is added.
    let again = kg.supersede(&change).await.unwrap();
    assert_eq!(again.new_triple_id, done.new_triple_id);
    let stats = kg.stats().await.unwrap();
    assert_eq!(stats.triples, 2);
    assert_eq!(
        stats.predicates,
        std::collections::BTreeMap::from([("uses".to_string(), 2)])
    );
    assert_eq!(
        stats.current_predicates,
        std::collections::BTreeMap::from([("uses".to_string(), 1)]),
        "open facts only"
    );

    // A same-day change is not refused: Clerk closes where Okta opens.
    let mut same_day = change.clone();
    same_day.old_object = "Clerk".into();
    same_day.new_object = "Okta".into();
    same_day.at = Some("2026-01-15T09:30:00Z".into());
    kg.supersede(&same_day).await.unwrap();
    let at = |d: &'static str| {
        let kg = Arc::clone(kg);
        async move {
            kg.query_entity("MyProject", Some(d), Direction::Outgoing)
                .await
                .unwrap()
                .into_iter()
                .map(|f| f.object)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(at("2026-01-15T09:29:59Z").await, vec!["Clerk"]);
    assert_eq!(at("2026-01-15T09:30:00Z").await, vec!["Okta"]);

    // No current old value: the new one still opens.
    let mut fresh = change.clone();
    fresh.predicate = "hosts_on".into();
    fresh.old_object = "Heroku".into();
    fresh.new_object = "Fly".into();
    kg.supersede(&fresh).await.unwrap();
    assert_eq!(
        kg.query_relationship("hosts_on", None).await.unwrap().len(),
        1
    );

    // Ending Okta before it started is refused and writes nothing.
    let before = kg.stats().await.unwrap();
    let mut early = change.clone();
    early.old_object = "Okta".into();
    early.new_object = "Auth0".into();
    early.at = Some("2026-01-15T09:00:00Z".into());
    assert!(
        matches!(
            kg.supersede(&early).await,
            Err(PalaceError::InvalidInput { field: "at", .. })
        ),
        "cannot close Okta before it started"
    );
    assert_eq!(
        kg.stats().await.unwrap(),
        before,
        "a refused supersede writes nothing"
    );
    // Without `at`, the change happens now (a UTC timestamp).
    let mut now = change.clone();
    now.old_object = "Okta".into();
    now.new_object = "Keycloak".into();
    now.at = None;
    let done = kg.supersede(&now).await.unwrap();
    assert!(done.new_valid_from.ends_with('Z') && done.new_valid_from.len() == 20);
}

/// The same open triple added twice is one row with one id.
pub async fn duplicate_open_triples_collapse<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    let a = kg
        .add_triple(&NewTriple::new("Ben", "likes", "Rust"))
        .await
        .unwrap();
    let b = kg
        .add_triple(&NewTriple::new("ben", "Likes", "rust"))
        .await
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(kg.stats().await.unwrap().triples, 1);
    let closed = NewTriple::new("Ben", "liked", "Go")
        .valid_from("2019-01-01")
        .valid_to("2020-12-31");
    // As 3.11: only a current fact collapses; a closed one added again is another row.
    assert_ne!(
        kg.add_triple(&closed).await.unwrap(),
        kg.add_triple(&closed).await.unwrap()
    );
    // While the fact is current, adding it with any interval returns the current one.
    let with_interval = NewTriple::new("Ben", "likes", "Rust")
        .valid_from("2020-01-01")
        .valid_to("2021-01-01");
    assert_eq!(kg.add_triple(&with_interval).await.unwrap(), a);
    assert_eq!(kg.stats().await.unwrap().triples, 3);
    kg.invalidate("Ben", "likes", "Rust", Some("2026-01-01"))
        .await
        .unwrap();
    let c = kg
        .add_triple(&NewTriple::new("Ben", "likes", "Rust").valid_from("2026-02-01"))
        .await
        .unwrap();
    assert_ne!(
        a, c,
        "after the old one closed, the same fact can start again"
    );
    assert_eq!(kg.stats().await.unwrap().triples, 4);
    // 3.11's id recipe: t_{subject}_{predicate}_{object}_{12 hex digits}.
    let hash = c.strip_prefix("t_ben_likes_rust_").expect(&c);
    assert!(
        hash.len() == 12 && hash.chars().all(|ch| ch.is_ascii_hexdigit()),
        "{c}"
    );
}

/// Chinese and emoji entity names round-trip and are found case-insensitively where it applies.
pub async fn unicode_entity_names<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("李雷", "认识", "韩梅梅"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("🚀 Rocket Team", "ships", "Ünïcode Ümlaut"))
        .await
        .unwrap();
    assert_eq!(
        summary(
            &kg.query_entity("韩梅梅", None, Direction::Incoming)
                .await
                .unwrap()
        ),
        vec![triple("李雷", "认识", "韩梅梅")]
    );
    let f = kg
        .query_entity("🚀 rocket team", None, Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(
        summary(&f),
        vec![triple("🚀 rocket team", "ships", "Ünïcode Ümlaut")]
    );
    assert_eq!(
        kg.query_entity("ünïcode ümlaut", None, Direction::Both)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A name that is no entity but matches exactly one by whole words (3.11's candidates)
/// answers for it; with several matches it answers nothing and lists them.
pub async fn unknown_names_resolve_to_a_single_candidate<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("Alice Smith", "works_at", "Acme"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("Bob", "knows", "Alice Smith"))
        .await
        .unwrap();
    let facts = kg
        .query_entity("Alice", None, Direction::Both)
        .await
        .unwrap();
    assert_eq!(
        summary(&facts),
        vec![
            triple("Alice Smith", "works_at", "Acme"),
            triple("Bob", "knows", "Alice Smith")
        ]
    );
    assert_eq!(
        kg.entity_candidates("alice").await.unwrap(),
        vec![EntityCandidate {
            id: "alice_smith".into(),
            name: "Alice Smith".into()
        }]
    );
    kg.add_triple(&NewTriple::new("Alice Jones", "likes", "tea"))
        .await
        .unwrap();
    assert!(
        kg.query_entity("Alice", None, Direction::Both)
            .await
            .unwrap()
            .is_empty(),
        "two Alices: no guess"
    );
    let mut names: Vec<String> = kg
        .entity_candidates("Alice")
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    names.sort();
    assert_eq!(names, vec!["Alice Jones", "Alice Smith"]);
    assert!(
        kg.entity_candidates("Al").await.unwrap().is_empty(),
        "names under 3 characters get no candidates"
    );
    assert!(
        kg.entity_candidates("lic").await.unwrap().is_empty(),
        "never a substring"
    );
    assert!(
        kg.entity_candidates("Alice Smith")
            .await
            .unwrap()
            .is_empty(),
        "the exact entity is not its own candidate"
    );
}

/// An entity nobody mentioned has no facts, and that is not an error.
pub async fn unknown_entity_is_empty<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("a", "b", "c")).await.unwrap();
    assert!(
        kg.query_entity("Nobody", None, Direction::Both)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        kg.query_entity("Nobody", Some("2025-01-01"), Direction::Incoming)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        kg.timeline(Some("Nobody"), Page::first(5))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        kg.query_relationship("unheard_of", None)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Empty names, confidence outside [0, 1], bad dates and reversed intervals are typed errors
/// and change nothing.
pub async fn bad_input_writes_nothing<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("keep", "me", "safe"))
        .await
        .unwrap();
    let before = kg.stats().await.unwrap();
    let mut bad_conf = NewTriple::new("s", "p", "o");
    bad_conf.confidence = 1.01;
    let mut nan_conf = NewTriple::new("s", "p", "o");
    nan_conf.confidence = f64::NAN;
    let cases = vec![
        NewTriple::new("", "p", "o"),
        NewTriple::new("s", "  ", "o"),
        NewTriple::new("s", "p", "\t"),
        bad_conf,
        nan_conf,
        NewTriple::new("s", "p", "o").valid_from("2025-02-30"),
        NewTriple::new("s", "p", "o").valid_to("not a date"),
        NewTriple::new("s", "p", "o")
            .valid_from("2025-06-02")
            .valid_to("2025-06-01"),
    ];
    for t in cases {
        match kg.add_triple(&t).await {
            Err(PalaceError::InvalidInput { .. }) => {}
            other => panic!("{t:?} should be invalid input, got {other:?}"),
        }
    }
    assert!(
        kg.invalidate("keep", "me", "safe", Some("whenever"))
            .await
            .is_err()
    );
    assert!(kg.add_entity(&NewEntity::new(" ")).await.is_err());
    let mut not_object = NewEntity::new("x");
    not_object.properties = serde_json::json!([1, 2]);
    assert!(kg.add_entity(&not_object).await.is_err());
    assert_eq!(kg.stats().await.unwrap(), before);
    assert!(
        kg.query_entity("keep", None, Direction::Outgoing)
            .await
            .unwrap()[0]
            .current
    );
}

/// Timelines are ordered by valid_from (undated last) and page without overlap.
pub async fn timeline_is_chronological_and_paged<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(&NewTriple::new("Riley", "joined", "team"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("Riley", "born_in", "Lyon").valid_from("2008-05-01"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("Riley", "started", "school").valid_from("2014-09-01"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("coach", "trains", "Riley").valid_from("2020-01-01T08:00:00Z"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("other", "x", "y").valid_from("2001-01-01"))
        .await
        .unwrap();
    let riley: Vec<String> = kg
        .timeline(Some("Riley"), Page::first(10))
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.predicate)
        .collect();
    assert_eq!(riley, vec!["born_in", "started", "trains", "joined"]);
    let all = kg.timeline(None, Page::first(100)).await.unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all[0].predicate, "x");
    let p1 = kg
        .timeline(
            None,
            Page {
                offset: 0,
                limit: 2,
            },
        )
        .await
        .unwrap();
    let p2 = kg
        .timeline(
            None,
            Page {
                offset: 2,
                limit: 2,
            },
        )
        .await
        .unwrap();
    let p3 = kg
        .timeline(
            None,
            Page {
                offset: 4,
                limit: 2,
            },
        )
        .await
        .unwrap();
    let paged: Vec<_> = p1.into_iter().chain(p2).chain(p3).collect();
    assert_eq!(paged, all);
    assert_eq!(kg.timeline_total(None).await.unwrap(), 5);
    assert_eq!(kg.timeline_total(Some("riley")).await.unwrap(), 4);
    assert_eq!(kg.timeline_total(Some("nobody")).await.unwrap(), 0);
}

/// stats counts entities, triples, current and expired, and a predicate histogram;
/// query_relationship selects by predicate and date.
pub async fn stats_and_relationships<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    kg.add_triple(
        &NewTriple::new("A", "uses", "X")
            .valid_from("2020-01-01")
            .valid_to("2020-12-31"),
    )
    .await
    .unwrap();
    kg.add_triple(&NewTriple::new("B", "uses", "X"))
        .await
        .unwrap();
    kg.add_triple(&NewTriple::new("A", "knows", "B"))
        .await
        .unwrap();
    let s = kg.stats().await.unwrap();
    assert_eq!(
        (s.entities, s.triples, s.current_facts, s.expired_facts),
        (3, 3, 2, 1)
    );
    assert_eq!(s.relationship_types, vec!["knows", "uses"]);
    assert_eq!(s.predicates.get("uses"), Some(&2));
    assert_eq!(kg.query_relationship("Uses", None).await.unwrap().len(), 2);
    let in_2021 = kg
        .query_relationship("uses", Some("2021-06-01"))
        .await
        .unwrap();
    assert_eq!(summary(&in_2021), vec![triple("B", "uses", "X")]);
    assert!(in_2021[0].direction.is_none());
}

/// add_entity inserts or updates one row per normalised id.
pub async fn entity_upsert_keeps_one_row<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg = &fx.kg;
    let mut e = NewEntity::new("Alice Smith");
    e.entity_type = "person".into();
    e.properties = serde_json::json!({"role": "founder"});
    assert_eq!(kg.add_entity(&e).await.unwrap(), "alice_smith");
    e.properties = serde_json::json!({"role": "ceo"});
    assert_eq!(kg.add_entity(&e).await.unwrap(), "alice_smith");
    assert_eq!(kg.stats().await.unwrap().entities, 1);
    kg.add_triple(&NewTriple::new("alice smith", "founded", "Acme"))
        .await
        .unwrap();
    assert_eq!(kg.stats().await.unwrap().entities, 2);
    let f = kg
        .query_entity("Alice Smith", None, Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(
        f[0].subject, "Alice Smith",
        "the first display name is kept"
    );
}

/// Concurrent adds from many tasks all land, and identical ones collapse.
pub async fn concurrent_adds_all_land<F: KgFactory + ?Sized>(factory: &F) {
    let fx = factory.create().await;
    let kg: Arc<dyn KnowledgeGraph> = Arc::clone(&fx.kg);
    let mut tasks = Vec::new();
    for t in 0..8 {
        let kg = Arc::clone(&kg);
        tasks.push(tokio::spawn(async move {
            for i in 0..20 {
                kg.add_triple(&NewTriple::new(
                    format!("agent{t}"),
                    "noted",
                    format!("fact{i}"),
                ))
                .await
                .unwrap();
                kg.add_triple(&NewTriple::new("shared", "noted", format!("fact{i}")))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in futures::future::join_all(tasks).await {
        t.unwrap();
    }
    assert_eq!(kg.stats().await.unwrap().triples, 8 * 20 + 20);
}
