//! Where the `mempalace` binary finds a palace when none is named, as MemPalace 3.11 finds it:
//! the palace variables and their aliases, `config.json` in the config folder, an existing
//! `~/.mempalace` install, else the XDG folder; and the legacy default palace's knowledge graph.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `mempalace status --json` with HOME set to `home` and only the given variables.
fn status(home: &Path, vars: &[(&str, &Path)]) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mempalace"));
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.args(["status", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn palace_path(v: &Value) -> String {
    v["palace_path"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string()
}

#[test]
fn a_palace_nobody_names_is_where_3_11_would_look() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // Nothing set, nothing installed: the XDG default.
    let v = status(&home, &[]);
    assert_eq!(
        palace_path(&v),
        home.join(".config/mempalace/palace").display().to_string()
    );
    // XDG_CONFIG_HOME moves it.
    let xdg = dir.path().join("xdg");
    let v = status(&home, &[("XDG_CONFIG_HOME", &xdg)]);
    assert_eq!(
        palace_path(&v),
        xdg.join("mempalace/palace").display().to_string()
    );
    // A ~/.mempalace install (config.json) keeps the legacy folder, and its palace_path wins.
    let legacy = home.join(".mempalace");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(
        legacy.join("config.json"),
        r#"{"palace_path": "~/elsewhere"}"#,
    )
    .unwrap();
    let v = status(&home, &[("XDG_CONFIG_HOME", &xdg)]);
    assert_eq!(
        palace_path(&v),
        home.join("elsewhere").display().to_string()
    );
    std::fs::write(legacy.join("config.json"), "{}").unwrap();
    let v = status(&home, &[]);
    assert_eq!(palace_path(&v), legacy.join("palace").display().to_string());
    // MEMPALACE_CONFIG_DIR overrides the folder; the palace variables override everything,
    // the documented one before its aliases.
    let conf = dir.path().join("conf");
    let v = status(&home, &[("MEMPALACE_CONFIG_DIR", &conf)]);
    assert_eq!(palace_path(&v), conf.join("palace").display().to_string());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let v = status(&home, &[("MEMPAL_PALACE_PATH", &b)]);
    assert_eq!(palace_path(&v), b.display().to_string());
    let v = status(
        &home,
        &[("MEMPALACE_PALACE", &a), ("MEMPAL_PALACE_PATH", &b)],
    );
    assert_eq!(palace_path(&v), a.display().to_string());
    let v = status(
        &home,
        &[("MEMPALACE_PALACE_PATH", &b), ("MEMPALACE_PALACE", &a)],
    );
    assert_eq!(palace_path(&v), b.display().to_string());
}
