#!/usr/bin/env python3
"""How long `mempalace hook run` keeps the harness waiting, on a large palace: p50 of
session-start (the wake-up context) and of stop with 20 new turns (10 exchanges) to file.

    python3 bench/hooks/run.py --bin $CARGO_TARGET_DIR/release/mempalace --palace /tmp/mcp-bench/palace-rust

The palace is copied first (stop files into the copy). Claude Code gives a hook 60 s by
default; the table says how much of it each hook takes. `--reference-311` with
`--reference-311-home` also times MemPalace 3.11's `hook run` on a 3.11 palace
(`--palace-311`) for the same transcript (its stop only counts and, every 15 messages, spawns a
background miner).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

SESSION = "0b1c2d3e-1111-4222-8333-944455566677"


def exchange(n: int) -> str:
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/me/dev/bench-proj",
            "sessionId": SESSION, "version": "1.0.80", "gitBranch": "main"}
    return "\n".join([
        json.dumps({**base, "type": "user", "uuid": f"u{n}", "timestamp": "2025-08-20T10:00:00.000Z",
                    "message": {"role": "user", "content": f"Step {n}: how should the parser handle nested quotes in field {n}?"}}),
        json.dumps({**base, "type": "assistant", "uuid": f"a{n}", "timestamp": "2025-08-20T10:00:05.000Z",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": f"For field {n}, escape nested quotes by doubling them and keep the reader streaming; I changed parse_field_{n} accordingly and added a test."}]}}),
    ]) + "\n"


def run_hook(cmd, env, hook, transcript):
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(transcript),
                          "cwd": "/home/me/dev/bench-proj", "hook_event_name": hook,
                          "stop_hook_active": False})
    t = time.perf_counter()
    r = subprocess.run(cmd + ["hook", "run", "--hook", hook, "--harness", "claude-code"],
                       input=payload.encode(), capture_output=True, env=env, timeout=600)
    ms = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        raise SystemExit(f"{hook}: exit {r.returncode}: {r.stderr.decode()[-2000:]}")
    return ms, r.stdout.decode()


def measure(label, cmd, env, home, runs):
    folder = home / ".claude" / "projects" / "-home-me-dev-bench-proj"
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{SESSION}.jsonl"
    transcript.write_text("".join(exchange(n) for n in range(4)))
    run_hook(cmd, env, "stop", transcript)  # files the first exchanges (and warms the page cache)
    starts, stops, context = [], [], 0
    n = 4
    for _ in range(runs):
        ms, out = run_hook(cmd, env, "session-start", transcript)
        starts.append(ms)
        context = len(json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", ""))
        with transcript.open("a") as f:
            for _ in range(10):
                f.write(exchange(n))
                n += 1
        ms, _ = run_hook(cmd, env, "stop", transcript)
        stops.append(ms)
    return {"label": label, "session_start_ms": statistics.median(starts),
            "session_start_max_ms": max(starts), "stop_20_turns_ms": statistics.median(stops),
            "stop_20_turns_max_ms": max(stops), "context_chars": context}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--palace", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--reference-311")
    ap.add_argument("--reference-311-home", type=Path)
    ap.add_argument("--palace-311", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hook-bench-"))
    rows = []
    home = work / "home-rust"
    (home / ".mempalace").mkdir(parents=True)
    palace = work / "palace-rust"
    shutil.copytree(args.palace, palace)
    env = dict(os.environ, HOME=str(home), MEMPALACE_PALACE_PATH=str(palace),
               MEMPALACE_MODEL_DIR=os.environ.get("MEMPALACE_MODEL_DIR", str(
                   Path.home() / ".cache/mempalace/models/all-MiniLM-L6-v2")))
    rows.append(measure("ours", [args.bin], env, home, args.runs))
    if args.reference_311:
        home311 = work / "home-311"
        (home311 / ".mempalace").mkdir(parents=True)
        os.symlink(args.reference_311_home / ".cache", home311 / ".cache")
        palace311 = work / "palace-311"
        shutil.copytree(args.palace_311, palace311)
        (home311 / ".mempalace" / "config.json").write_text(json.dumps({"palace_path": str(palace311)}))
        env311 = {"PATH": "/usr/bin:/bin", "HOME": str(home311), "ANONYMIZED_TELEMETRY": "False"}
        rows.append(measure("MemPalace 3.11", [args.reference_311], env311, home311, args.runs))
    drawers = subprocess.run([args.bin, "--palace", str(palace), "status", "--json"],
                             capture_output=True, env=env).stdout
    total = json.loads(drawers).get("total_drawers", "?")
    print(f"\npalace: {total} drawers (a copy of {args.palace}); {args.runs} runs each\n")
    print("| p50 (max) | session-start | stop, 20 new turns | context added (chars) |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['label']} | {r['session_start_ms']:.0f} ms ({r['session_start_max_ms']:.0f}) | "
              f"{r['stop_20_turns_ms']:.0f} ms ({r['stop_20_turns_max_ms']:.0f}) | {r['context_chars']} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
