//! A full disk: the palace lives on a small tmpfs the test mounts, filled to the brim before
//! each long write (`mine`, `import`) and a graph write (`kg add`). The command fails with a clear
//! error naming the lack of space, nothing stored before is lost, the palace opens and
//! verifies, and once space is freed the same command completes the job. Without permission
//! to mount (not root, or no CAP_SYS_ADMIN) the test says SKIPPED and why.

#[path = "support/palace_runs.rs"]
mod palace_runs;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use palace_runs::{Env, args, holding, write_project};
use serde_json::Value;

/// A tmpfs mounted for the test, unmounted when dropped.
struct SmallDisk {
    mount_point: PathBuf,
}

impl SmallDisk {
    /// Mounts a tmpfs of `megabytes` at `mount_point`, or `None` with the reason.
    fn mount(mount_point: &Path, megabytes: u32) -> Result<Self, String> {
        std::fs::create_dir_all(mount_point).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(mount_point)
            .output()
            .map_err(|e| format!("mount could not run: {e}"))?;
        if out.status.success() {
            Ok(SmallDisk {
                mount_point: mount_point.to_path_buf(),
            })
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mount_point)
            .status();
    }
}

/// Fills the disk holding `dir` with `dir/filler` until a write fails for lack of space.
fn fill(dir: &Path) -> PathBuf {
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 64 * 1024];
    loop {
        match file.write(&block) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
    // Small writes may still fit in the last partial block: use them up too.
    let byte = [0u8; 1];
    while file.write(&byte).is_ok_and(|n| n == 1) {}
    drop(file);
    filler
}

#[test]
fn long_writes_on_a_full_disk_fail_clearly_lose_nothing_and_complete_once_freed() {
    let dir = tempfile::tempdir().unwrap();
    let disk = match SmallDisk::mount(&dir.path().join("disk"), 48) {
        Ok(disk) => disk,
        Err(reason) => {
            eprintln!("SKIPPED full-disk test: cannot mount a tmpfs here ({reason})");
            return;
        }
    };
    let env = Env::new(dir.path());
    let project = dir.path().join("project");
    write_project(&project, 20);
    let base_project = dir.path().join("base-project");
    write_project(&base_project, 2);
    let p = |p: &Path| p.to_str().unwrap().to_string();

    // The import path's input, and the reference of each completed command, off the small disk.
    let reference = dir.path().join("reference");
    env.ok(
        &reference,
        &args(&["mine", &p(&base_project), "--wing", "base", "--quiet"]),
    );
    env.ok(
        &reference,
        &args(&["kg", "add", "Alice", "works_on", "Orion"]),
    );
    env.ok(
        &reference,
        &args(&["mine", &p(&project), "--wing", "bulk", "--quiet"]),
    );
    let export = dir.path().join("export.jsonl");
    env.ok(&reference, &args(&["export", &p(&export)]));
    env.ok(&reference, &args(&["kg", "add", "Bob", "knows", "Alice"]));
    let expected = holding(&env, &reference);

    let commands: Vec<(&str, Vec<String>)> = vec![
        (
            "mine",
            args(&["mine", &p(&project), "--wing", "bulk", "--quiet"]),
        ),
        ("import", args(&["import", &p(&export)])),
    ];
    for (name, command) in commands {
        let palace = disk.mount_point.join(name);
        env.ok(
            &palace,
            &args(&["mine", &p(&base_project), "--wing", "base", "--quiet"]),
        );
        env.ok(&palace, &args(&["kg", "add", "Alice", "works_on", "Orion"]));
        let before = holding(&env, &palace);
        let filler = fill(&disk.mount_point);

        for (what, command) in [
            (name, command.clone()),
            ("kg add", args(&["kg", "add", "Bob", "knows", "Alice"])),
        ] {
            let out = env.command(&palace, &command).output().unwrap();
            assert!(!out.status.success(), "{what} on a full disk succeeded");
            let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
            assert!(
                err.contains("no space left")
                    || err.contains("disk is full")
                    || err.contains(" is full ("),
                "{what}: the error names the lack of space: {err}"
            );
            assert!(!err.contains("panicked"), "{what}: {err}");
        }
        // Nothing stored before is lost, and the palace opens (reads need no space).
        env.ok(&palace, &args(&["status", "--json"]));
        let after = holding(&env, &palace);
        assert!(
            after.drawers.is_superset(&before.drawers),
            "{name}: drawers lost"
        );
        assert!(after.facts.is_superset(&before.facts), "{name}: facts lost");

        // Space freed: the same commands complete the job.
        std::fs::remove_file(&filler).unwrap();
        env.ok(&palace, &command);
        env.ok(&palace, &args(&["kg", "add", "Bob", "knows", "Alice"]));
        let done = holding(&env, &palace);
        assert_eq!(
            done.drawers, expected.drawers,
            "{name}: completed once freed"
        );
        assert_eq!(done.facts, expected.facts, "{name}: completed once freed");
        let verified: Value =
            serde_json::from_str(&env.ok(&palace, &args(&["verify", "--json"]))).unwrap();
        assert_eq!(verified["sound"], true, "{name}: {verified}");
        std::fs::remove_dir_all(&palace).unwrap();
    }
}
