//! `mempalace wake-up` on a mined palace, with the real model: the essential story stays
//! within its budget as all-MiniLM-L6-v2's tokenizer counts it, and shows the palace's key
//! facts from every room.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn wake_up(palace: &Path, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(palace)
        .arg("wake-up")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn wake_up_keeps_its_budget_by_the_model_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    for (rel, text) in [
        (
            "docs/decisions.md",
            "# Decisions\n\nWe chose Postgres over MySQL for billing because of row-level security.\n",
        ),
        (
            "docs/deploy.md",
            "# Deploy\n\nProduction deploys run from the release branch every Tuesday after the freeze.\n",
        ),
        (
            "notes/people.md",
            "# People\n\nKai owns the payments service; Priya reviews every schema migration.\n",
        ),
    ] {
        let path = project.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let palace = dir.path().join("palace");
    let mined = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(&palace)
        .args(["mine", "--quiet"])
        .arg(&project)
        .output()
        .unwrap();
    assert!(
        mined.status.success(),
        "{}",
        String::from_utf8_lossy(&mined.stderr)
    );
    std::fs::write(
        palace.join("identity.txt"),
        "I am Atlas, the team's assistant.",
    )
    .unwrap();

    let woken = wake_up(&palace, &[]);
    assert_eq!(
        woken["token_counter"], "all-MiniLM-L6-v2 tokenizer",
        "{woken}"
    );
    let text = woken["text"].as_str().unwrap();
    assert!(text.starts_with("I am Atlas"), "{text}");
    for fact in ["Postgres over MySQL", "every Tuesday", "Priya reviews"] {
        assert!(text.contains(fact), "{fact} in {text}");
    }
    assert!(woken["essential"]["tokens"].as_u64().unwrap() <= 800);

    // AAAK summaries of the same drawers, sized by the same tokenizer.
    let out = Command::new(env!("CARGO_BIN_EXE_mempalace"))
        .arg("--palace")
        .arg(&palace)
        .args(["compress", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let drawers = report["drawers"].as_array().unwrap();
    assert_eq!(drawers.len(), 3, "{report}");
    assert_eq!(report["token_counter"], "all-MiniLM-L6-v2 tokenizer");
    let decisions = drawers
        .iter()
        .map(|d| d["aaak"].as_str().unwrap())
        .find(|a| {
            a.contains("|decisions\n0:")
                || a.contains(
                    "|decisions
0:",
                )
        })
        .unwrap_or_else(|| panic!("{report}"));
    assert!(decisions.contains("DECISION"), "{decisions}");
    let sum: u64 = drawers
        .iter()
        .map(|d| d["aaak_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(report["aaak_tokens"].as_u64().unwrap(), sum);

    let tight = wake_up(&palace, &["--tokens", "40"]);
    let tokens = tight["essential"]["tokens"].as_u64().unwrap();
    assert!((1..=40).contains(&tokens), "{tight}");
    assert!(tight["drawer_ids"].as_array().unwrap().len() < 3, "{tight}");
}
