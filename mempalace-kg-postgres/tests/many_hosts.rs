//! What only a shared server shows: independent graphs (each its own pool, as separate hosts
//! have) on one schema agree, race without duplicates, and palaces on one server stay apart.

use std::sync::Arc;

use tokio::sync::Barrier;

use mempalace_conformance::live_service::postgres_url;
use mempalace_core::{Direction, KnowledgeGraph, NewEntity, NewTriple, Page, Supersede};
use mempalace_kg_postgres::{PostgresKnowledgeGraph, SchemaName};

mod common;
use common::fresh_schema;

/// `n` independent "hosts" on one schema, each already connected (so they start together).
async fn hosts(url: &str, schema: &SchemaName, n: usize) -> Vec<Arc<PostgresKnowledgeGraph>> {
    let mut fleet = Vec::new();
    for _ in 0..n {
        let kg = PostgresKnowledgeGraph::connect(url, schema.clone()).unwrap();
        kg.exists().await.unwrap();
        fleet.push(Arc::new(kg));
    }
    fleet
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hosts_creating_and_filing_the_same_facts_at_once_file_each_once() {
    let Some(url) = postgres_url("hosts_creating_and_filing_the_same_facts_at_once_file_each_once")
    else {
        return;
    };
    let schema = fresh_schema("fleet");
    let fleet = hosts(&url, &schema, 8).await;
    // The entities exist already: filing a fact then inserts no entity row, whose key would
    // make racing writers queue behind each other anyway.
    for name in std::iter::once("Team".to_string()).chain((0..20).map(|i| format!("Tool {i}"))) {
        fleet[0].add_entity(&NewEntity::new(name)).await.unwrap();
    }
    let start = Arc::new(Barrier::new(fleet.len()));
    let mut tasks = Vec::new();
    for (h, kg) in fleet.iter().enumerate() {
        let (kg, start) = (Arc::clone(kg), Arc::clone(&start));
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            let mut ids = Vec::new();
            for i in 0..20 {
                // 20 shared facts every host files, and 5 of its own.
                ids.push(
                    kg.add_triple(&NewTriple::new("Team", "uses", format!("Tool {i}")))
                        .await
                        .unwrap(),
                );
                if i < 5 {
                    kg.add_triple(&NewTriple::new(
                        format!("Host {h}"),
                        "runs",
                        format!("Job {i}"),
                    ))
                    .await
                    .unwrap();
                }
            }
            ids
        }));
    }
    let mut by_host = Vec::new();
    for t in tasks {
        by_host.push(t.await.unwrap());
    }
    assert!(
        by_host.windows(2).all(|w| w[0] == w[1]),
        "every host got the same id for each shared fact"
    );
    let stats = fleet[0].stats().await.unwrap();
    assert_eq!(stats.triples, 20 + 8 * 5, "{stats:?}");
    assert_eq!(stats.current_facts, stats.triples);
    let team = fleet[3]
        .query_entity("Team", None, Direction::Outgoing)
        .await
        .unwrap();
    assert_eq!(team.len(), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_supersedes_close_the_old_fact_once_and_open_one_new_fact() {
    let Some(url) = postgres_url("racing_supersedes_close_the_old_fact_once_and_open_one_new_fact")
    else {
        return;
    };
    let schema = fresh_schema("fleet");
    let fleet = hosts(&url, &schema, 6).await;
    fleet[0]
        .add_triple(&NewTriple::new("Alice", "works_at", "Acme").valid_from("2024-01-01"))
        .await
        .unwrap();
    fleet[0]
        .add_entity(&NewEntity::new("Globex"))
        .await
        .unwrap();
    let start = Arc::new(Barrier::new(fleet.len()));
    let mut tasks = Vec::new();
    for kg in &fleet {
        let (kg, start) = (Arc::clone(kg), Arc::clone(&start));
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            kg.supersede(&Supersede {
                subject: "Alice".into(),
                predicate: "works_at".into(),
                old_object: "Acme".into(),
                new_object: "Globex".into(),
                at: Some("2025-06-01".into()),
                confidence: 1.0,
                source_closet: None,
            })
            .await
            .unwrap()
            .new_triple_id
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(t.await.unwrap());
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "one new fact, whoever won: {ids:?}");
    let timeline = fleet[1]
        .timeline(Some("Alice"), Page::first(10))
        .await
        .unwrap();
    assert_eq!(timeline.len(), 2, "{timeline:?}");
    let current: Vec<_> = timeline.iter().filter(|f| f.current).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].object, "Globex");
    let closed = timeline.iter().find(|f| !f.current).unwrap();
    assert_eq!(closed.object, "Acme");
    assert_eq!(closed.valid_to.as_deref(), Some("2025-06-01T00:00:00Z"));
    // Hosts racing to invalidate the new fact close it once.
    let start = Arc::new(Barrier::new(fleet.len()));
    let mut tasks = Vec::new();
    for kg in &fleet {
        let (kg, start) = (Arc::clone(kg), Arc::clone(&start));
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            kg.invalidate("Alice", "works_at", "Globex", Some("2026-01-01"))
                .await
                .unwrap()
        }));
    }
    let mut closed = 0;
    for t in tasks {
        closed += t.await.unwrap();
    }
    assert_eq!(closed, 1);
    assert_eq!(fleet[2].stats().await.unwrap().current_facts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn palaces_on_one_server_keep_their_graphs_apart() {
    let Some(url) = postgres_url("palaces_on_one_server_keep_their_graphs_apart") else {
        return;
    };
    let a = PostgresKnowledgeGraph::connect(&url, fresh_schema("palace_a")).unwrap();
    let b = PostgresKnowledgeGraph::connect(&url, fresh_schema("palace_b")).unwrap();
    a.add_triple(&NewTriple::new("Alice", "uses", "Clerk"))
        .await
        .unwrap();
    assert!(!b.exists().await.unwrap(), "b's schema was never created");
    assert!(
        b.query_entity("Alice", None, Direction::Both)
            .await
            .unwrap()
            .is_empty()
    );
    b.add_triple(&NewTriple::new("Bob", "uses", "Auth0"))
        .await
        .unwrap();
    assert_eq!(a.stats().await.unwrap().triples, 1);
    assert_eq!(b.stats().await.unwrap().triples, 1);
    assert_eq!(
        SchemaName::for_palace("0f3a9c").unwrap().as_str(),
        "mempalace_0f3a9c"
    );
}

#[tokio::test]
async fn a_bad_url_or_an_unreachable_server_is_a_clear_error() {
    let schema = SchemaName::new("mempalace_x").unwrap();
    assert!(PostgresKnowledgeGraph::connect("not a url ://", schema.clone()).is_err());
    // A closed port on loopback: the first call fails with the reason, nothing panics.
    let kg = PostgresKnowledgeGraph::connect("postgres://postgres@127.0.0.1:1/postgres", schema)
        .unwrap();
    let err = kg.stats().await.unwrap_err().to_string();
    assert!(err.contains("connecting to PostgreSQL"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hosts_filing_facts_about_new_entities_in_opposite_orders_do_not_deadlock() {
    let Some(url) =
        postgres_url("hosts_filing_facts_about_new_entities_in_opposite_orders_do_not_deadlock")
    else {
        return;
    };
    let schema = fresh_schema("fleet");
    let fleet = hosts(&url, &schema, 4).await;
    fleet[0].create_if_missing().await.unwrap();
    for round in 0..20 {
        let (a, b) = (format!("Person {round} A"), format!("Person {round} B"));
        let start = Arc::new(Barrier::new(fleet.len()));
        let mut tasks = Vec::new();
        for (h, kg) in fleet.iter().enumerate() {
            let (kg, start) = (Arc::clone(kg), Arc::clone(&start));
            let (a, b) = (a.clone(), b.clone());
            tasks.push(tokio::spawn(async move {
                start.wait().await;
                // Half the hosts name the entities one way round, half the other; the batch
                // holds the same two facts in opposite orders too.
                let (x, y) = if h % 2 == 0 { (&a, &b) } else { (&b, &a) };
                kg.add_triple(&NewTriple::new(x, "knows", y)).await?;
                let batch = [NewTriple::new(&a, "met", &b), NewTriple::new(&b, "met", &a)];
                let batch = if h % 2 == 0 {
                    batch.to_vec()
                } else {
                    batch.into_iter().rev().collect()
                };
                kg.add_triples(&batch).await
            }));
        }
        for t in tasks {
            t.await.unwrap().expect("no deadlock, no error");
        }
    }
    let stats = fleet[0].stats().await.unwrap();
    assert_eq!(stats.triples, 20 * 4, "{stats:?}");
    assert_eq!(stats.entities, 20 * 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_belongs_to_one_palace() {
    let Some(url) = postgres_url("a_schema_belongs_to_one_palace") else {
        return;
    };
    let schema = fresh_schema("owned");
    let mine = PostgresKnowledgeGraph::connect(&url, schema.clone())
        .unwrap()
        .with_owner("palace_a");
    mine.add_triple(&NewTriple::new("Alice", "uses", "Clerk"))
        .await
        .unwrap();
    let theirs = PostgresKnowledgeGraph::connect(&url, schema.clone())
        .unwrap()
        .with_owner("palace_b");
    let err = theirs
        .query_entity("Alice", None, Direction::Both)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("belongs to another palace"), "{err}");
    assert!(
        theirs
            .add_triple(&NewTriple::new("Bob", "uses", "Vim"))
            .await
            .is_err()
    );
    // The owner's other hosts, and tools that do not check, read it.
    let again = PostgresKnowledgeGraph::connect(&url, schema.clone())
        .unwrap()
        .with_owner("palace_a");
    assert_eq!(again.stats().await.unwrap().triples, 1);
    let unchecked = PostgresKnowledgeGraph::connect(&url, schema).unwrap();
    assert_eq!(unchecked.stats().await.unwrap().triples, 1);
}
