//! The MCP server end to end: the built `mempalace` binary on the real embedded stack (LanceDB,
//! SQLite, all-MiniLM-L6-v2), spoken to over stdio by an rmcp client, replaying the design's
//! four phases and checking every payload field by field.

use mempalace_conformance::live_service::qdrant_url;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

/// Starts `mempalace [stack args] --palace <palace> mcp`.
async fn start(palace: &std::path::Path, stack_args: &[String]) -> RunningService<RoleClient, ()> {
    let transport = TokioChildProcess::new(
        Command::new(env!("CARGO_BIN_EXE_mempalace")).configure(|c| {
            c.args(stack_args).arg("--palace").arg(palace).arg("mcp");
        }),
    )
    .unwrap();
    ().serve(transport).await.unwrap()
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    args: Value,
) -> Result<Value, ServiceError> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = client.call_tool(params).await?;
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} returned isError: {result:?}"
    );
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("text content");
    Ok(serde_json::from_str(&text).expect("tool result is JSON"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_phases_over_stdio() {
    four_phases(&[]).await;
}

/// The same four phases with the drawers in Qdrant (a fresh collection on the server at
/// `QDRANT_URL`, deleted afterwards); SKIPPED without a server (a failure in CI, see
/// `mempalace_conformance::live_service`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_phases_over_stdio_on_qdrant() {
    let Some(url) = qdrant_url("four_phases_over_stdio_on_qdrant") else {
        return;
    };
    let collection = format!(
        "mempalace_e2e_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let args = [
        "--backend".to_string(),
        "qdrant".into(),
        "--qdrant-url".into(),
        url.clone(),
        "--collection".into(),
        collection.clone(),
    ];
    four_phases(&args).await;
    let admin = qdrant_client::Qdrant::from_url(&url)
        .api_key(std::env::var("QDRANT_API_KEY").ok())
        .skip_compatibility_check()
        .build()
        .unwrap();
    admin.delete_collection(collection.as_str()).await.unwrap();
}

async fn four_phases(stack_args: &[String]) {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let client = start(&palace, stack_args).await;

    let info = client.peer_info().expect("initialized");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("mempalace")
    );
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "mempalace_status",
        "mempalace_list_wings",
        "mempalace_list_rooms",
        "mempalace_get_taxonomy",
        "mempalace_get_aaak_spec",
        "mempalace_search",
        "mempalace_check_duplicate",
        "mempalace_add_drawer",
        "mempalace_get_drawer",
        "mempalace_list_drawers",
        "mempalace_delete_drawer",
        "mempalace_kg_query",
        "mempalace_kg_add",
        "mempalace_kg_invalidate",
        "mempalace_kg_supersede",
        "mempalace_kg_timeline",
        "mempalace_kg_stats",
        "mempalace_diary_write",
        "mempalace_diary_read",
    ] {
        assert!(names.contains(&expected), "missing tool {expected}");
    }

    // No palace yet: status answers the no-palace payload and creates nothing.
    let status = call(&client, "mempalace_status", json!({})).await.unwrap();
    assert_eq!(status["error"], "No palace found");
    assert_eq!(
        status["hint"],
        "Run: mempalace init <dir> && mempalace mine <dir>"
    );
    assert_eq!(status["palace_path"], palace.display().to_string());
    assert!(!palace.join("lance").exists());

    for (wing, room, content) in [
        (
            "wing_myproject",
            "auth",
            "We replaced Auth0 with Clerk because Auth0's SAML pricing tripled our bill.",
        ),
        (
            "wing_myproject",
            "billing",
            "Stripe retries failed webhooks for three days, so handlers must be idempotent.",
        ),
        (
            "wing_personal",
            "family",
            "Riley plays football every Saturday morning in the park.",
        ),
    ] {
        let r = call(&client, "mempalace_add_drawer", json!({"wing": wing, "room": room, "content": content, "source_file": format!("/notes/{room}.md")}))
            .await
            .unwrap();
        assert_eq!(r["success"], true, "{r}");
    }

    // Phase 1: status.
    let status = call(&client, "mempalace_status", json!({})).await.unwrap();
    assert_eq!(status["total_drawers"], 3);
    assert_eq!(
        status["wings"],
        json!({"wing_myproject": 2, "wing_personal": 1})
    );
    assert_eq!(
        status["rooms"],
        json!({"auth": 1, "billing": 1, "family": 1})
    );
    assert_eq!(status["palace_path"], palace.display().to_string());
    assert!(
        status["protocol"]
            .as_str()
            .unwrap()
            .starts_with("IMPORTANT")
    );
    assert!(status["aaak_dialect"].as_str().unwrap().contains("AAAK"));

    // Phase 2: search with a wing filter.
    let found = call(&client, "mempalace_search", json!({"query": "why did we switch our login provider", "wing": "wing_myproject", "limit": 5}))
        .await
        .unwrap();
    assert_eq!(found["query"], "why did we switch our login provider");
    assert_eq!(
        found["filters"],
        json!({"wing": "wing_myproject", "room": null, "source_file": null, "since": null, "before": null})
    );
    assert_eq!(found["mode"], "hybrid");
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let top = results[0].as_object().unwrap();
    assert_eq!(top.len(), 13, "the seed's five fields and 3.11's: {top:?}");
    assert!(
        top["drawer_id"]
            .as_str()
            .unwrap()
            .starts_with("drawer_wing_myproject_auth_")
    );
    assert!(top["score"].as_f64().unwrap() >= results[1]["score"].as_f64().unwrap());
    assert_eq!(top["room"], "auth");
    assert_eq!(top["wing"], "wing_myproject");
    assert_eq!(top["source_file"], "auth.md");
    assert!(top["text"].as_str().unwrap().contains("Clerk"));
    let sim = top["similarity"].as_f64().unwrap();
    assert!(sim > results[1]["similarity"].as_f64().unwrap());
    assert_eq!((sim * 1000.0).round() / 1000.0, sim);

    // Phase 3: knowledge graph, both directions.
    let added = call(&client, "mempalace_kg_add", json!({"subject": "Clerk", "predicate": "replaces", "object": "Auth0", "valid_from": "2026-01-15"}))
        .await
        .unwrap();
    assert_eq!(added["success"], true);
    assert_eq!(added["fact"], "Clerk → replaces → Auth0");
    call(
        &client,
        "mempalace_kg_add",
        json!({"subject": "MyProject", "predicate": "uses", "object": "Clerk"}),
    )
    .await
    .unwrap();
    let q = call(
        &client,
        "mempalace_kg_query",
        json!({"entity": "Clerk", "direction": "both"}),
    )
    .await
    .unwrap();
    assert_eq!(q["entity"], "Clerk");
    assert_eq!(q["count"], 2);
    assert_eq!(
        q["facts"][0],
        json!({"direction": "outgoing", "subject": "Clerk", "predicate": "replaces", "object": "Auth0",
               "valid_from": "2026-01-15", "valid_to": null, "confidence": 1.0, "source_closet": null, "current": true})
    );
    assert_eq!(q["facts"][1]["direction"], "incoming");
    assert_eq!(q["facts"][1]["subject"], "MyProject");
    let only_in = call(
        &client,
        "mempalace_kg_query",
        json!({"entity": "clerk", "direction": "incoming"}),
    )
    .await
    .unwrap();
    assert_eq!(only_in["count"], 1);

    // Phase 4: the same content twice.
    let content = "Decided to run CI on a 2-core machine with a persistent target directory.";
    let first = call(
        &client,
        "mempalace_add_drawer",
        json!({"wing": "wing_myproject", "room": "infra", "content": content}),
    )
    .await
    .unwrap();
    assert_eq!(first["success"], true);
    let id = first["drawer_id"].as_str().unwrap().to_string();
    assert!(
        id.starts_with("drawer_wing_myproject_infra_")
            && id.len() == "drawer_wing_myproject_infra_".len() + 16
    );
    let second = call(
        &client,
        "mempalace_add_drawer",
        json!({"wing": "wing_myproject", "room": "infra", "content": content}),
    )
    .await
    .unwrap();
    assert_eq!(second["success"], false);
    assert_eq!(second["reason"], "duplicate");
    assert_eq!(second["matches"][0]["id"], id.as_str());
    assert!(second["matches"][0]["similarity"].as_f64().unwrap() >= 0.9);

    // A tool that ran and failed answers as MemPalace 3.11: `{"error": message}` (flagged
    // isError); an unknown tool is -32601; bad arguments are -32602.
    let missing = client
        .call_tool(
            CallToolRequestParams::new("mempalace_get_drawer").with_arguments(
                json!({"drawer_id": "drawer_nope"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    assert_eq!(missing.is_error, Some(true), "{missing:?}");
    let text = &missing.content[0].as_text().unwrap().text;
    let payload: Value = serde_json::from_str(text).unwrap();
    assert!(
        payload["error"].as_str().unwrap().contains("drawer_nope"),
        "{payload}"
    );
    match client
        .call_tool(CallToolRequestParams::new("mempalace_nope"))
        .await
    {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND),
        other => panic!("expected method not found, got {other:?}"),
    }
    match client
        .call_tool(
            CallToolRequestParams::new("mempalace_search")
                .with_arguments(json!({"query": 7}).as_object().unwrap().clone()),
        )
        .await
    {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("expected invalid params, got {other:?}"),
    }
    let stats = call(&client, "mempalace_kg_stats", json!({}))
        .await
        .unwrap();
    assert_eq!(stats["triples"], 2);
    client.cancel().await.unwrap();
}
