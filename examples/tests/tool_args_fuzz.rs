//! Fuzzing every tool's argument parsing and dispatch with proptest, through an rmcp client
//! connected in process: arbitrary JSON (wrong types, huge and odd strings, deep nesting,
//! negative and enormous numbers) for every tool name, and arbitrary names. Every call ends in
//! a result, a tool failure (`isError` with `{"error": …}`) or a protocol error (-32601 for an
//! unknown tool, -32602 for arguments that do not fit), never a panic, and a refused call
//! changes nothing stored.

use std::sync::Arc;

use mempalace::mcp::MemPalaceServer;
use mempalace_conformance::HashingEmbedder;
use mempalace_core::agent_hooks::AgentHooks;
use mempalace_core::{Embedder, KnowledgeGraph, MemoryStore, Palace, VectorStore};
use mempalace_kg_sqlite::SqliteKnowledgeGraph;
use proptest::prelude::*;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};

const DIMENSION: usize = 64;

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z_]{1,12}",
        any::<String>(),
        Just("x' OR 1=1 --".to_string()),
        Just("\u{fffd}\u{0}\u{202e}李雷🙂".to_string()),
        Just("2025-13-45".to_string()),
        Just("2025-06-01".to_string()),
        (1usize..200_000).prop_map(|n| "a".repeat(n)),
    ]
}

fn arb_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1e300)),
        Just(json!(u64::MAX)),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        arb_number(),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,14}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The argument names the tools use, so generated objects often hit real fields.
const FIELDS: [&str; 30] = [
    "drawer_ids",
    "dry_run",
    "items",
    "since",
    "before",
    "mode",
    "max_distance",
    "silent_save",
    "query",
    "limit",
    "wing",
    "room",
    "content",
    "threshold",
    "source_file",
    "added_by",
    "drawer_id",
    "offset",
    "entity",
    "as_of",
    "direction",
    "subject",
    "predicate",
    "object",
    "valid_from",
    "valid_to",
    "confidence",
    "source_closet",
    "agent_name",
    "entry",
];

fn arb_arguments() -> impl Strategy<Value = Option<Map<String, Value>>> {
    let field = proptest::sample::select(&FIELDS[..]).prop_map(str::to_string);
    proptest::option::weighted(
        0.95,
        proptest::collection::btree_map(field, arb_json(), 0..8)
            .prop_map(|m| m.into_iter().collect::<Map<String, Value>>()),
    )
}

fn arb_tool_name() -> impl Strategy<Value = String> {
    let palace = Palace::new(
        "/nonexistent",
        Arc::new(HashingEmbedder::new(DIMENSION)),
        Arc::new(MemoryStore::new(DIMENSION)),
        Arc::new(SqliteKnowledgeGraph::in_memory()),
    )
    .expect("palace");
    let names: Vec<String> = MemPalaceServer::new(Arc::new(palace))
        .tools()
        .into_iter()
        .map(|t| t.name.to_string())
        // Not fuzzed: mining a generated path, and waiting up to a minute for an event.
        .filter(|n| n != "mempalace_mine" && n != "mempalace_event_wait")
        .collect();
    prop_oneof![
        9 => proptest::sample::select(names),
        1 => arb_string(),
    ]
}

struct Fixture {
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    client: RunningService<RoleClient, ()>,
    store: Arc<dyn VectorStore>,
    kg: Arc<dyn KnowledgeGraph>,
}

fn fixture() -> Fixture {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let embedder: Arc<dyn Embedder> = Arc::new(HashingEmbedder::new(DIMENSION));
    let store: Arc<dyn VectorStore> = Arc::new(MemoryStore::new(DIMENSION));
    let kg: Arc<dyn KnowledgeGraph> = Arc::new(SqliteKnowledgeGraph::in_memory());
    let dir = tempfile::tempdir().expect("temp dir");
    let palace = Palace::new(
        dir.path().join("palace"),
        embedder,
        store.clone(),
        kg.clone(),
    )
    .expect("palace");
    rt.block_on(palace.init()).expect("init");
    let server = MemPalaceServer::new(Arc::new(palace)).with_agent_hooks(AgentHooks::new(
        dir.path().join("config"),
        dir.path().join("state"),
    ));
    let client = rt.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_io).await.expect("client")
    });
    Fixture {
        rt,
        _dir: dir,
        client,
        store,
        kg,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn every_call_is_answered_and_refusals_change_nothing(
        name in arb_tool_name(),
        arguments in arb_arguments(),
    ) {
        thread_local! {
            static FIXTURE: Fixture = fixture();
        }
        FIXTURE.with(|f| {
            f.rt.block_on(async {
                let drawers_before = f.store.count(&Default::default()).await.expect("count");
                let kg_before = f.kg.stats().await.expect("stats");
                let mut params = CallToolRequestParams::new(name.clone());
                if let Some(a) = arguments.clone() {
                    params = params.with_arguments(a);
                }
                let refused = match f.client.call_tool(params).await {
                    Ok(result) => {
                        let text = result
                            .content
                            .first()
                            .and_then(|c| c.as_text())
                            .map(|t| t.text.clone())
                            .unwrap_or_default();
                        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                        // 3.11's graph tools answer lists; every other tool an object.
                        prop_assert!(
                            value.is_object() || value.is_array(),
                            "a tool answers JSON: {text}"
                        );
                        if result.is_error == Some(true) {
                            prop_assert!(
                                value["error"].as_str().is_some_and(|m| !m.is_empty()),
                                "a failure names its error: {value}"
                            );
                        }
                        result.is_error == Some(true)
                    }
                    Err(rmcp::ServiceError::McpError(e)) => {
                        prop_assert!(
                            e.code.0 == -32602 || e.code.0 == -32601,
                            "protocol error code for {name} {arguments:?}: {e:?}"
                        );
                        prop_assert!(!e.message.is_empty());
                        true
                    }
                    Err(other) => {
                        prop_assert!(false, "transport failure for {name}: {other:?}");
                        true
                    }
                };
                if refused {
                    prop_assert_eq!(
                        f.store.count(&Default::default()).await.expect("count"),
                        drawers_before,
                        "a refused {} changed the drawers", name
                    );
                    prop_assert_eq!(f.kg.stats().await.expect("stats"), kg_before);
                }
                Ok(())
            })
        })?;
    }
}
