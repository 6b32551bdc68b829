//! The whole MCP surface of MemPalace 3.11, end to end: the built `mempalace` binary on the
//! embedded stack, driven over stdio by an rmcp client. `tools/list` names the same 47 tools
//! with the same argument names and required sets as 3.11 (read from 3.11's own schemas into
//! tests/fixtures/mempalace-3.11/mcp_tools.json), and every tool is called and its payload
//! checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

/// Starts `mempalace --palace <palace> mcp` with HOME and the config folder in `home` (the
/// model still comes from the user's cache, or MEMPALACE_MODEL_DIR).
async fn start(palace: &Path, home: &Path) -> RunningService<RoleClient, ()> {
    let model_dir = std::env::var_os("MEMPALACE_MODEL_DIR").unwrap_or_else(|| {
        dirs::home_dir()
            .expect("a home folder")
            .join(".cache/mempalace/models/all-MiniLM-L6-v2")
            .into_os_string()
    });
    let transport = TokioChildProcess::new(
        Command::new(env!("CARGO_BIN_EXE_mempalace")).configure(|c| {
            c.env("HOME", home)
                .env("MEMPALACE_MODEL_DIR", &model_dir)
                .env("MEMPALACE_CONFIG_DIR", home.join(".mempalace"))
                .arg("--palace")
                .arg(palace)
                .arg("mcp");
        }),
    )
    .unwrap();
    ().serve(transport).await.unwrap()
}

/// A tool's answer: `Ok(payload)`, or `Err(payload)` for a tool that ran and failed.
async fn answer(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    args: Value,
) -> Result<Value, Value> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    let result = client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e:?}"));
    let text = &result.content[0].as_text().expect("text content").text;
    let payload: Value = serde_json::from_str(text).expect("JSON payload");
    if result.is_error == Some(true) {
        Err(payload)
    } else {
        Ok(payload)
    }
}

async fn ok(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Value {
    answer(client, tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool} failed: {e}"))
}

async fn failed(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> String {
    match answer(client, tool, args).await {
        Err(e) => e["error"].as_str().expect("error message").to_string(),
        Ok(v) => panic!("{tool} should have failed: {v}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_matches_mempalace_3_11() {
    let dir = tempfile::tempdir().unwrap();
    let client = start(&dir.path().join("palace"), dir.path()).await;
    let expected: BTreeMap<String, Value> = serde_json::from_str(include_str!(
        "../../tests/fixtures/mempalace-3.11/mcp_tools.json"
    ))
    .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let want: BTreeSet<String> = expected.keys().cloned().collect();
    assert_eq!(names, want, "the same 47 tools as MemPalace 3.11");
    for t in &tools {
        let spec = &expected[t.name.as_ref()];
        let required: BTreeSet<&str> = t
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let want_required: BTreeSet<&str> = spec["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(required, want_required, "required arguments of {}", t.name);
        let properties: BTreeSet<&str> = t
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for p in spec["properties"].as_array().unwrap() {
            assert!(
                properties.contains(p.as_str().unwrap()),
                "{} lacks 3.11's argument {p}",
                t.name
            );
        }
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 20),
            "{} has a description an AI client can act on",
            t.name
        );
    }
    // An unknown tool is -32601; a misspelt argument is -32602 naming it.
    match client
        .call_tool(CallToolRequestParams::new("mempalace_nope"))
        .await
    {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code.0, -32601),
        other => panic!("{other:?}"),
    }
    match client
        .call_tool(
            CallToolRequestParams::new("mempalace_list_tunnels")
                .with_arguments(json!({"wnig": "x"}).as_object().unwrap().clone()),
        )
        .await
    {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32602);
            assert!(e.message.contains("wnig"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_new_tool_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let palace = dir.path().join("palace");
    let c = start(&palace, dir.path()).await;

    // Drawers: checkpoint files, dedups and writes a diary entry in one call.
    let cp = ok(
        &c,
        "mempalace_checkpoint",
        json!({
            "items": [
                {"wing": "wing_api", "room": "design", "content": "The REST API paginates with opaque cursors, never offsets."},
                {"wing": "wing_db", "room": "design", "content": "The orders table is partitioned by month on created_at."},
                {"wing": "wing_db", "room": "schema", "content": "Customer emails are stored lower-cased with a unique index."},
                {"wing": "wing_api", "room": "design", "content": "The REST API paginates with opaque cursors, never offsets."},
                {"wing": "", "room": "x", "content": "no wing"}
            ],
            "diary": {"agent_name": "Codex", "entry": "SESSION:api+db design notes|★★"}
        }),
    )
    .await;
    assert_eq!(cp["added"].as_array().unwrap().len(), 3, "{cp}");
    assert_eq!(cp["duplicates"].as_array().unwrap().len(), 1, "{cp}");
    assert_eq!(cp["errors"].as_array().unwrap().len(), 1, "{cp}");
    assert_eq!(cp["diary"]["success"], true, "{cp}");
    let ids: Vec<String> = cp["added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["drawer_id"].as_str().unwrap().to_string())
        .collect();

    let got = ok(
        &c,
        "mempalace_get_drawers",
        json!({"drawer_ids": [ids[0], "drawer_missing"]}),
    )
    .await;
    assert_eq!(
        (got["count"].clone(), got["errors"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(got["results"][0]["metadata"]["wing"], "wing_api", "{got}");
    assert!(
        got["results"][1]["error"]
            .as_str()
            .unwrap()
            .contains("drawer_missing")
    );
    assert!(
        failed(&c, "mempalace_get_drawers", json!({"drawer_ids": []}))
            .await
            .contains("empty")
    );

    let updated = ok(
        &c,
        "mempalace_update_drawer",
        json!({"drawer_id": ids[2], "room": "privacy", "content": "Customer emails are stored lower-cased and hashed for lookups."}),
    )
    .await;
    assert_eq!(
        (updated["success"].clone(), updated["room"].clone()),
        (json!(true), json!("privacy"))
    );
    let one = ok(&c, "mempalace_get_drawer", json!({"drawer_id": ids[2]})).await;
    assert!(one["content"].as_str().unwrap().contains("hashed"), "{one}");
    assert_eq!(one["metadata"]["room"], "privacy");
    assert!(
        failed(
            &c,
            "mempalace_update_drawer",
            json!({"drawer_id": "drawer_missing", "room": "r"})
        )
        .await
        .contains("drawer_missing")
    );

    let listed = ok(
        &c,
        "mempalace_list_drawers",
        json!({"wing": "wing_db", "since": "2000-01-01", "before": "2999-01-01", "limit": 1}),
    )
    .await;
    assert_eq!(
        (listed["total"].clone(), listed["count"].clone()),
        (json!(2), json!(1)),
        "{listed}"
    );
    let none = ok(&c, "mempalace_list_drawers", json!({"since": "2999-01-01"})).await;
    assert_eq!(none["total"], 0);

    // Search takes 3.11's arguments; media search is refused rather than ignored.
    let hits = ok(
        &c,
        "mempalace_search",
        json!({"query": "how are orders partitioned", "candidate_strategy": "union", "query_task": "search", "context": "db work", "max_distance": 0}),
    )
    .await;
    assert_eq!(hits["results"][0]["drawer_id"], ids[1].as_str(), "{hits}");
    failed(
        &c,
        "mempalace_search",
        json!({"query": "x", "include_media": true}),
    )
    .await;

    // Diary in a shared project wing, read back by the same agent only.
    ok(
        &c,
        "mempalace_diary_write",
        json!({"agent_name": "Codex", "content": "Shared note from Codex", "wing": "wing_api"}),
    )
    .await;
    ok(
        &c,
        "mempalace_diary_write",
        json!({"agent_name": "Other", "entry": "Shared note from Other", "wing": "wing_api"}),
    )
    .await;
    let diary = ok(
        &c,
        "mempalace_diary_read",
        json!({"agent_name": "Codex", "wing": "wing_api"}),
    )
    .await;
    assert_eq!(diary["total"], 1, "{diary}");
    assert_eq!(diary["entries"][0]["content"], "Shared note from Codex");

    // The palace graph: a shared room name is a passive tunnel; explicit tunnels are stored.
    let stats = ok(&c, "mempalace_graph_stats", json!({})).await;
    // design is in two wings, and so is diary (the agent's own and the shared one).
    assert_eq!(stats["tunnel_rooms"], 2, "{stats}");
    let found = ok(
        &c,
        "mempalace_find_tunnels",
        json!({"wing_a": "wing_api", "wing_b": "wing_db"}),
    )
    .await;
    assert_eq!(found[0]["room"], "design", "{found}");
    let walk = ok(
        &c,
        "mempalace_traverse",
        json!({"start_room": "privacy", "max_hops": 2}),
    )
    .await;
    assert!(
        walk.as_array()
            .unwrap()
            .iter()
            .any(|r| r["room"] == "design"),
        "{walk}"
    );
    let unknown = ok(&c, "mempalace_traverse", json!({"start_room": "desig"})).await;
    assert!(unknown["error"].as_str().is_some(), "{unknown}");

    let tunnel = ok(
        &c,
        "mempalace_create_tunnel",
        json!({"source_wing": "wing_api", "source_room": "design", "target_wing": "wing_db", "target_room": "privacy", "label": "API exposes emails", "target_drawer_id": ids[2]}),
    )
    .await;
    let tunnel_id = tunnel["id"].as_str().unwrap().to_string();
    assert!(failed(&c, "mempalace_create_tunnel", json!({"source_wing": "wing_api", "source_room": "nope", "target_wing": "wing_db", "target_room": "design"})).await.contains("nope"));
    let listed = ok(&c, "mempalace_list_tunnels", json!({"wing": "wing_db"})).await;
    assert_eq!(listed[0]["id"], tunnel_id.as_str());
    let followed = ok(
        &c,
        "mempalace_follow_tunnels",
        json!({"wing": "wing_api", "room": "design"}),
    )
    .await;
    assert_eq!(followed[0]["connected_room"], "privacy", "{followed}");
    assert!(
        followed[0]["drawer_preview"]
            .as_str()
            .unwrap()
            .contains("hashed")
    );
    let after = ok(&c, "mempalace_list_tunnels", json!({})).await;
    assert_eq!(
        after[0]["access_count"], 1,
        "following counts as a traversal: {after}"
    );
    assert_eq!(
        ok(
            &c,
            "mempalace_delete_tunnel",
            json!({"tunnel_id": tunnel_id})
        )
        .await["existed"],
        true
    );
    assert_eq!(ok(&c, "mempalace_list_tunnels", json!({})).await, json!([]));
    let hallways = ok(&c, "mempalace_list_hallways", json!({"limit": 10})).await;
    assert_eq!(hallways["total"], 0);
    assert_eq!(
        ok(&c, "mempalace_delete_hallway", json!({"hallway_id": "h1"})).await["deleted"],
        false
    );

    // Coordination: events, acks, tasks, artifacts, patches, waiting.
    let request = ok(
        &c,
        "mempalace_event_append",
        json!({"type": "task.request", "stream": "project/demo", "room": "delegation", "from_agent": "lead", "to_agent": "worker", "correlation_id": "t-1", "body": "Add pagination tests"}),
    )
    .await;
    let request_id = request["event"]["id"].as_str().unwrap().to_string();
    let inbox = ok(&c, "mempalace_event_list", json!({"to_agent": "worker"})).await;
    assert_eq!(inbox["events"][0]["id"], request_id.as_str(), "{inbox}");
    let bad = answer(
        &c,
        "mempalace_event_append",
        json!({"type": "Bad Type", "stream": "s", "room": "r", "from_agent": "a"}),
    )
    .await
    .unwrap_err();
    assert_eq!(bad["success"], false, "{bad}");
    let ack = ok(
        &c,
        "mempalace_event_ack",
        json!({"event_id": request_id, "from_agent": "worker", "status": "claimed"}),
    )
    .await;
    assert_eq!(
        (
            ack["event"]["to_agent"].clone(),
            ack["event"]["correlation_id"].clone()
        ),
        (json!("lead"), json!("t-1"))
    );
    let waited = ok(
        &c,
        "mempalace_event_wait",
        json!({"to_agent": "lead", "since_event_id": request_id, "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(
        (
            waited["timed_out"].clone(),
            waited["events"][0]["type"].clone()
        ),
        (json!(false), json!("event.ack")),
        "{waited}"
    );
    let timed_out = ok(
        &c,
        "mempalace_event_wait",
        json!({"correlation_id": "nothing", "timeout_ms": 300}),
    )
    .await;
    assert_eq!(timed_out["timed_out"], true);
    let task = ok(
        &c,
        "mempalace_task_create",
        json!({"project": "demo", "from_agent": "lead", "to_agent": "worker", "goal": "Write the tests", "branch": "main", "base_commit": "0123456789abcdef0123456789abcdef01234567", "done": "CI green"}),
    )
    .await;
    assert_eq!(task["success"], true, "{task}");
    let art = ok(
        &c,
        "mempalace_artifact_put",
        json!({"kind": "note", "content": "Größe: 42 ✓", "created_by": "worker"}),
    )
    .await;
    let got = ok(
        &c,
        "mempalace_artifact_get",
        json!({"artifact_id": art["artifact"]["id"]}),
    )
    .await;
    assert_eq!(got["artifact"]["content"], "Größe: 42 ✓", "{got}");
    assert_eq!(got["artifact"]["sha256"], art["artifact"]["sha256"]);
    let patch = ok(&c, "mempalace_patch_submit", json!({"content": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "from_agent": "worker", "stream": "project/demo", "correlation_id": "t-1"})).await;
    assert_eq!(patch["event"]["type"], "patch.ready", "{patch}");
    assert_eq!(patch["event"]["artifact_ids"][0], patch["artifact"]["id"]);
    let mesh = ok(&c, "mempalace_mesh_peers", json!({})).await;
    assert!(
        mesh["self"]["version_vector"]
            .as_object()
            .unwrap()
            .values()
            .any(|v| v.as_i64() >= Some(4)),
        "{mesh}"
    );

    // Hooks and session helpers, in this test's own HOME.
    let hooks = ok(
        &c,
        "mempalace_hook_settings",
        json!({"desktop_toast": true}),
    )
    .await;
    assert_eq!(hooks["settings"]["desktop_toast"], true, "{hooks}");
    assert_eq!(
        ok(&c, "mempalace_hook_settings", json!({})).await["settings"]["desktop_toast"],
        true
    );
    assert_eq!(
        ok(&c, "mempalace_memories_filed_away", json!({})).await["status"],
        "quiet"
    );
    let state = dir.path().join(".mempalace/hook_state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("last_checkpoint"),
        r#"{"msgs": 12, "ts": "2026-12-04T09:00:00"}"#,
    )
    .unwrap();
    assert_eq!(
        ok(&c, "mempalace_memories_filed_away", json!({})).await["count"],
        12
    );
    assert!(
        ok(&c, "mempalace_reconnect", json!({})).await["drawers"]
            .as_u64()
            .unwrap()
            >= 5
    );

    // Mining from the client, sync and delete_by_source.
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::write(project.join("docs/deploy.md"), "# Deploy\n\nProduction deploys run from the release branch every Tuesday after the freeze.\n").unwrap();
    std::fs::write(
        project.join("docs/oncall.md"),
        "# On call\n\nThe on-call engineer owns the pager from Monday 9:00 to Monday 9:00.\n",
    )
    .unwrap();
    let dry = ok(
        &c,
        "mempalace_mine",
        json!({"source": project, "dry_run": true, "wing": "ops"}),
    )
    .await;
    assert_eq!(dry["files"], 2, "{dry}");
    let mined = ok(
        &c,
        "mempalace_mine",
        json!({"source": project, "wing": "ops"}),
    )
    .await;
    assert_eq!(mined["files_mined"], 2, "{mined}");
    assert!(
        failed(
            &c,
            "mempalace_mine",
            json!({"source": project, "mode": "extract"})
        )
        .await
        .contains("extract")
    );
    // Conversations: the Claude.ai fixture export, with 3.11's general extraction.
    let chats = dir.path().join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/conversations/claude-ai/conversations.json"),
        chats.join("conversations.json"),
    )
    .unwrap();
    let convos = ok(
        &c,
        "mempalace_mine",
        json!({"source": chats, "mode": "convos", "extract": "general", "wing": "chats"}),
    )
    .await;
    assert_eq!(convos["conversations"], 2, "{convos}");
    assert_eq!(convos["files_by_format"]["claude-ai"], 1, "{convos}");
    assert!(
        convos["filed"]["drawers_filed"].as_u64().unwrap() > 0,
        "{convos}"
    );
    assert!(
        failed(
            &c,
            "mempalace_mine",
            json!({"source": project, "extract": "general"})
        )
        .await
        .contains("convos")
    );
    std::fs::remove_file(project.join("docs/oncall.md")).unwrap();
    let report = ok(&c, "mempalace_sync", json!({"project_dir": project})).await;
    assert_eq!(
        (
            report["dry_run"].clone(),
            report["stale_sources"].as_array().unwrap().len()
        ),
        (json!(true), 1),
        "{report}"
    );
    let applied = ok(
        &c,
        "mempalace_sync",
        json!({"project_dir": project, "apply": true}),
    )
    .await;
    assert!(applied["deleted"].as_u64().unwrap() >= 1, "{applied}");
    let deploy = std::fs::canonicalize(project.join("docs/deploy.md")).unwrap();
    let preview = ok(
        &c,
        "mempalace_delete_by_source",
        json!({"source_file": deploy}),
    )
    .await;
    assert_eq!(
        (preview["dry_run"].clone(), preview["deleted"].clone()),
        (json!(true), json!(0))
    );
    assert!(preview["match_count"].as_u64().unwrap() >= 1, "{preview}");
    let gone = ok(
        &c,
        "mempalace_delete_by_source",
        json!({"source_file": deploy, "dry_run": false}),
    )
    .await;
    assert_eq!(gone["deleted"], preview["match_count"]);
    assert_eq!(
        ok(&c, "mempalace_list_drawers", json!({"wing": "ops"})).await["total"],
        0
    );

    // The timeline pages with its total, as 3.11's does.
    for (s, o) in [("api", "cursors"), ("api", "json"), ("db", "postgres")] {
        ok(
            &c,
            "mempalace_kg_add",
            json!({"subject": s, "predicate": "uses", "object": o}),
        )
        .await;
    }
    let page = ok(
        &c,
        "mempalace_kg_timeline",
        json!({"entity": "api", "limit": 1, "offset": 1}),
    )
    .await;
    assert_eq!(
        (
            page["count"].clone(),
            page["total"].clone(),
            page["offset"].clone(),
            page["limit"].clone()
        ),
        (json!(1), json!(2), json!(1), json!(1)),
        "{page}"
    );

    // Bulk delete reports each id.
    let deleted = ok(
        &c,
        "mempalace_delete_drawers",
        json!({"drawer_ids": [ids[0], "drawer_missing"]}),
    )
    .await;
    assert_eq!(
        (deleted["deleted"].clone(), deleted["errors"].clone()),
        (json!(1), json!(1)),
        "{deleted}"
    );
    let single = ok(&c, "mempalace_delete_drawer", json!({"drawer_id": ids[1]})).await;
    assert_eq!(single["deleted_ids"], json!([ids[1]]));
    c.cancel().await.unwrap();
}
