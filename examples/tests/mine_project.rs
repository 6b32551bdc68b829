//! `mempalace init` + `mine` on a project tree made here (folders, a .gitignore, a binary file,
//! a Chinese markdown file): the right file is found first, ignored and binary files are not
//! filed, and re-mining an unchanged tree adds nothing while a changed file replaces its chunks.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn mempalace(palace: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mempalace {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(palace: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&mempalace(palace, args)).unwrap()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn init_mine_search_and_remine() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("acme-app");
    let palace = dir.path().join("palace");
    write(&project, "backend/payments.rs", &"// Stripe webhook handler: verifies signatures, stores event ids so retries are idempotent, marks invoices paid.\n".repeat(12));
    write(&project, "frontend/theme.css", &"/* dark mode colours: --surface, --text and --accent custom properties follow prefers-color-scheme */\n".repeat(10));
    write(
        &project,
        "docs/onboarding.md",
        "# Onboarding\n\nNew engineers get a laptop on day one, pair with a buddy for two weeks, and ship a small fix in their first week. Ask in #help for access to staging.\n",
    );
    write(
        &project,
        "docs/团队约定.md",
        "# 团队约定\n\n代码评审必须在二十四小时内完成。每个拉取请求至少需要一位同事批准，涉及数据库迁移的改动需要两位同事批准。发布在每周二和周四进行。\n",
    );
    write(
        &project,
        "secrets/keys.txt",
        "this folder is ignored by .gitignore and must never be filed, it holds api keys and passwords\n",
    );
    write(&project, ".gitignore", "secrets/\n");
    write(
        &project,
        "node_modules/lib/index.js",
        "module.exports = 'dependency code that must not be mined because it is vendored';\n",
    );
    std::fs::write(
        project.join("docs/logo.dat"),
        [0u8, 159, 146, 150, 0, 1, 2, 3].repeat(100),
    )
    .unwrap();

    let init = mempalace(&palace, &["init", project.to_str().unwrap()]);
    assert!(init.contains("acme_app"), "{init}");
    let yaml = std::fs::read_to_string(project.join("mempalace.yaml")).unwrap();
    for room in ["backend", "docs", "frontend", "general"] {
        assert!(yaml.contains(&format!("name: {room}")), "{yaml}");
    }

    let report = json(&palace, &["mine", project.to_str().unwrap(), "--json"]);
    assert_eq!(report["files_mined"], 4, "{report}");
    let filed = report["drawers_filed"].as_u64().unwrap();
    assert!(filed >= 4);

    let status = json(&palace, &["status", "--json"]);
    assert_eq!(status["total_drawers"].as_u64().unwrap(), filed);
    assert_eq!(status["wings"]["acme_app"].as_u64().unwrap(), filed);
    assert!(status["rooms"]["backend"].as_u64().unwrap() >= 1);
    assert!(status["rooms"].get("secrets").is_none());

    let found = json(
        &palace,
        &[
            "search",
            "how are payment webhook retries handled",
            "--json",
        ],
    );
    assert_eq!(found["results"][0]["source_file"], "payments.rs", "{found}");
    assert_eq!(found["results"][0]["room"], "backend");
    let zh = json(
        &palace,
        &["search", "代码评审需要多久完成", "--json", "--limit", "1"],
    );
    assert_eq!(zh["results"][0]["source_file"], "团队约定.md", "{zh}");
    let all = json(
        &palace,
        &[
            "search",
            "api keys and passwords",
            "--json",
            "--limit",
            "20",
        ],
    );
    for hit in all["results"].as_array().unwrap() {
        assert_ne!(hit["source_file"], "keys.txt");
        assert_ne!(hit["source_file"], "index.js");
        assert_ne!(hit["source_file"], "logo.dat");
    }

    let again = json(&palace, &["mine", project.to_str().unwrap(), "--json"]);
    assert_eq!(
        again["drawers_filed"], 0,
        "re-mining an unchanged tree adds nothing: {again}"
    );
    assert_eq!(again["files_unchanged"], 4);
    assert_eq!(
        json(&palace, &["status", "--json"])["total_drawers"]
            .as_u64()
            .unwrap(),
        filed
    );

    // A shorter file replaces its old chunks.
    write(
        &project,
        "backend/payments.rs",
        "// Payments moved to a separate service; this file only re-exports its client and the webhook types.\n",
    );
    let changed = json(&palace, &["mine", project.to_str().unwrap(), "--json"]);
    assert_eq!(changed["files_mined"], 1, "{changed}");
    assert!(changed["drawers_removed"].as_u64().unwrap() >= 1);
    let after = json(
        &palace,
        &[
            "search",
            "payments service re-exports",
            "--json",
            "--room",
            "backend",
        ],
    );
    assert_eq!(after["results"].as_array().unwrap().len(), 1, "{after}");
}
