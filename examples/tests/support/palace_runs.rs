//! Running the `mempalace` binary on a palace and reading back what the palace holds: what
//! the crash-point and full-disk tests share.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The model the processes load (from the real home: theirs is a temporary one).
pub fn model_dir() -> PathBuf {
    mempalace_embed_candle::model_dir::resolve(None)
}

/// A home folder for the processes and a scratch root.
pub struct Env {
    /// The processes' HOME.
    pub home: PathBuf,
    /// Where palaces are made.
    pub root: PathBuf,
}

impl Env {
    /// Processes with their own HOME under `root`.
    pub fn new(root: &Path) -> Self {
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Env {
            home,
            root: root.to_path_buf(),
        }
    }

    /// `mempalace --palace PALACE ARGS`, output captured.
    pub fn command(&self, palace: &Path, args: &[String]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mempalace"));
        c.env("HOME", &self.home)
            .env("MEMPALACE_MODEL_DIR", model_dir())
            .env_remove("MEMPALACE_PALACE_PATH")
            .env_remove("MEMPALACE_CONFIG_DIR")
            .arg("--palace")
            .arg(palace)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs the command, asserting success; its stdout.
    pub fn ok(&self, palace: &Path, args: &[String]) -> String {
        let out: Output = self.command(palace, args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Owned arguments.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A project of `files` notes, each a few chunks of distinct text.
pub fn write_project(dir: &Path, files: usize) {
    const WORDS: [&str; 32] = [
        "harbor", "violin", "granite", "orbit", "lantern", "meadow", "cipher", "falcon", "ember",
        "glacier", "quartz", "saffron", "tundra", "willow", "zephyr", "basalt", "coral", "dune",
        "fjord", "nebula", "prism", "sierra", "thistle", "walnut", "copper", "delta", "island",
        "jasmine", "kernel", "lagoon", "mosaic", "nectar",
    ];
    std::fs::create_dir_all(dir).unwrap();
    let mut state: u64 = 17;
    for f in 0..files {
        let mut text = format!("# Note {f}\n\n");
        for s in 0..40 {
            let mut words = Vec::new();
            for _ in 0..12 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                words.push(WORDS[(state >> 33) as usize % WORDS.len()]);
            }
            text.push_str(&format!("Sentence {s} of note {f}: {}.\n", words.join(" ")));
        }
        std::fs::write(dir.join(format!("note_{f:03}.md")), text).unwrap();
    }
}

/// What a palace holds, comparable between two palaces: drawer (id, text) pairs and facts
/// (subject, predicate, object, valid_from, valid_to).
#[derive(Debug, PartialEq, Eq)]
pub struct Holding {
    /// (id, text) of every drawer.
    pub drawers: BTreeSet<(String, String)>,
    /// (subject, predicate, object, valid_from, valid_to) of every fact.
    pub facts: BTreeSet<(String, String, String, String, String)>,
}

/// What `palace` holds, read through `export` (asserting no drawer is there twice).
pub fn holding(env: &Env, palace: &Path) -> Holding {
    let text = env.ok(palace, &args(&["export", "-", "--no-vectors"]));
    let mut drawers = BTreeSet::new();
    let mut ids = HashSet::new();
    let mut facts = BTreeSet::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
        match v["row"].as_str() {
            Some("drawer") => {
                assert!(ids.insert(s("id")), "drawer {} is stored twice", s("id"));
                drawers.insert((s("id"), s("text")));
            }
            Some("triple") => {
                facts.insert((
                    s("subject"),
                    s("predicate"),
                    s("object"),
                    s("valid_from"),
                    s("valid_to"),
                ));
            }
            _ => {}
        }
    }
    Holding { drawers, facts }
}
