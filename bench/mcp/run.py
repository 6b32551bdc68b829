#!/usr/bin/env python3
"""Per-call speed of this server and MemPalace 3.11, side by side, through one MCP client.

Both palaces are mined from the same corpus by their own CLIs; then each MCP server is started
and driven over stdio by the same minimal client (bench/retrieval/run.py's McpClient) with the
same calls. Prints a Markdown table: cold start → first status, status, search, add_drawer,
kg_add, kg_query (p50 ms), the server's RSS after the run, and mining speed.

    python3 bench/mcp/run.py --bin target/release/mempalace \\
        --reference-311 VENV/bin/mempalace --reference-311-home HOME_WITH_ONNX_MODEL

3.11 wants chromadb's ONNX export of all-MiniLM-L6-v2 under
$HOME/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx: build it offline from the same
safetensors with bench/mcp/build_minilm_onnx.py (see bench/retrieval/README.md).
The default corpus is a slice of CPython's standard library (the running python's): ten
packages and, with `--size 10k` (the default), the top-level modules too, about 10,000
drawers (issue #20 sets its goals at 10k); `--size 2k` keeps the ten packages (about 2,400).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "retrieval"))
from run import McpClient, Python311, System, run_cmd  # noqa: E402

STDLIB_SLICE = ["json", "email", "http", "logging", "urllib", "xmlrpc", "wsgiref", "sqlite3",
                "concurrent", "importlib"]
QUERIES = [
    "how to parse a JSON document into python objects", "send an HTTP request with headers",
    "rotate log files when they grow too large", "quote special characters in a URL",
    "parse an email message with attachments", "run tasks in a thread pool",
    "connect to a sqlite database and run a query", "serve a WSGI application",
    "decode base64 encoded email headers", "set a timeout on a socket connection",
    "format log records with a custom formatter", "import a module from a file path",
    "handle cookies in HTTP responses", "call a remote procedure over XML-RPC",
    "escape HTML special characters", "retry a failed network request",
    "stream a large response body in chunks", "register a custom JSON encoder",
    "read the charset of a MIME part", "cancel a running future",
]

# The words the bench's notes are drawn from.
NOTE_WORDS = sorted({w for q in QUERIES for w in q.split()})


def p50(xs):
    return statistics.median(xs) * 1000


def rss_mib(pid: int, field: str = "VmRSS") -> float:
    """One memory line of /proc/PID/status in MiB: VmRSS (all resident pages), RssAnon (what
    the process allocated) or RssFile (file pages: its code, libraries and mapped files)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def p50_of(call, n):
    """p50 in ms of `call(i)` for i in 0..n."""
    times = []
    for i in range(n):
        t = time.perf_counter()
        call(i)
        times.append(time.perf_counter() - t)
    return p50(times)


def timed(client, name, args, n):
    return p50_of(lambda i: client.call_tool(name, args(i) if callable(args) else args), n)


def measure(system: System, corpus: Path, work: Path, wing: str) -> dict:
    palace = work / f"palace-{system.label}"
    log = work / f"{system.label}.log"
    shutil.rmtree(palace, ignore_errors=True)
    mine_dir = work / f"corpus-{system.label}"
    shutil.rmtree(mine_dir, ignore_errors=True)
    shutil.copytree(corpus, mine_dir)
    run_cmd(system.init_cmd(palace, mine_dir, wing), system.env, log)
    mine_s = run_cmd(system.mine_cmd(palace, mine_dir, wing), system.env, log)

    t0 = time.perf_counter()
    client = McpClient(system.mcp_cmd(palace), system.env, work / f"{system.label}-mcp.err", 600)
    client.initialize()
    status = client.call_tool("mempalace_status", {})
    cold = time.perf_counter() - t0
    drawers = status.get("total_drawers", 0)
    out = {"drawers": drawers, "cold_start_ms": cold * 1000,
           "mining_drawers_per_s": drawers / mine_s if mine_s else 0.0}
    # One search first loads the model in both (3.11 loads ONNX on first use, we in the
    # background after initialize); the timed calls are warm.
    client.call_tool("mempalace_search", {"query": "warm up", "limit": 5})
    out["status_ms"] = timed(client, "mempalace_status", {}, 20)
    # MCP `ping` runs no tool: the floor this client and the stdio transport put under every
    # call, whatever the server does.
    out["ping_ms"] = p50_of(lambda _: client.request("ping", {}), 50)
    # A tool that reads nothing: the client + transport + dispatch overhead of one call.
    out["round_trip_ms"] = timed(client, "mempalace_get_aaak_spec", {}, 50)
    out["search_ms"] = timed(client, "mempalace_search",
                             lambda i: {"query": QUERIES[i % len(QUERIES)], "limit": 5}, 60)
    stamp = int(time.time() * 1000)

    def note(i, kind):
        """A note of about 35 tokens that is no near-duplicate of any other the bench files:
        15 words drawn from the queries' vocabulary, seeded by kind and number."""
        words = random.Random(f"{kind}-{i}").sample(NOTE_WORDS, 15)
        return {"wing": "bench", "room": "notes",
                "content": f"Bench {kind} {stamp}-{i}: {' '.join(words)}."}

    out["add_drawer_ms"] = timed(client, "mempalace_add_drawer", lambda i: note(i, "note"), 30)
    out["check_duplicate_ms"] = timed(
        client, "mempalace_check_duplicate", lambda i: {"content": note(i, "check")["content"]}, 30)
    # Filing a note unless a near-duplicate (similarity >= 0.9) is there: our add_drawer looks
    # for one itself (the seed's design); 3.11's add_drawer only checks for the same id, so a
    # 3.11 client gets the same outcome from check_duplicate and then add_drawer.
    if system.add_checks_duplicates:
        out["checked_add_ms"] = out["add_drawer_ms"]
    else:
        def check_then_add(i):
            n = note(i, "checked note")
            if not client.call_tool("mempalace_check_duplicate",
                                    {"content": n["content"]}).get("is_duplicate"):
                client.call_tool("mempalace_add_drawer", n)
        out["checked_add_ms"] = p50_of(check_then_add, 30)
    out["kg_add_ms"] = timed(
        client, "mempalace_kg_add",
        lambda i: {"subject": f"service_{i}", "predicate": "depends_on", "object": f"db_{i % 7}"}, 50)
    out["kg_query_ms"] = timed(client, "mempalace_kg_query",
                               lambda i: {"entity": f"service_{i % 50}"}, 50)
    out["rss_mib"] = rss_mib(client.proc.pid)
    out["rss_anon_mib"] = rss_mib(client.proc.pid, "RssAnon")
    out["rss_file_mib"] = rss_mib(client.proc.pid, "RssFile")
    client.close()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="this project's mempalace binary (release)")
    ap.add_argument("--reference-311", required=True, help="the 3.11 venv's mempalace executable")
    ap.add_argument("--reference-311-home", required=True, type=Path,
                    help="HOME for 3.11 (where chromadb's ONNX model cache lives)")
    ap.add_argument("--corpus", type=Path, help="folder to mine (default: a stdlib slice)")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temp dir)")
    ap.add_argument("--results", type=Path, help="also write both systems' measures here (JSON)")
    ap.add_argument("--size", choices=["2k", "10k"], default="10k",
                    help="the default corpus: ten stdlib packages (2k), or those and the "
                         "top-level modules (10k drawers)")
    args = ap.parse_args()

    work = args.work or Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus
    if corpus is None:
        corpus = work / "stdlib"
        shutil.rmtree(corpus, ignore_errors=True)
        lib = Path(os.__file__).parent
        for name in STDLIB_SLICE:
            shutil.copytree(lib / name, corpus / name,
                            ignore=shutil.ignore_patterns("__pycache__", "test*", "*.pyc"))
        if args.size == "10k":
            (corpus / "toplevel").mkdir()
            for module in sorted(lib.glob("*.py")):
                shutil.copy(module, corpus / "toplevel" / module.name)
    env311 = dict(os.environ, HOME=str(args.reference_311_home.resolve()), ANONYMIZED_TELEMETRY="False")
    env311.pop("MEMPALACE_PALACE_PATH", None)
    rust_env = dict(os.environ, HOME=str(work / "home-rust"),
                    MEMPALACE_MODEL_DIR=os.environ.get(
                        "MEMPALACE_MODEL_DIR",
                        str(Path.home() / ".cache/mempalace/models/all-MiniLM-L6-v2")))
    ours = measure(System(args.bin, rust_env), corpus, work, "stdlib")
    ref = measure(Python311(args.reference_311, env311), corpus, work, "stdlib")
    if args.results:
        args.results.write_text(json.dumps({"ours": ours, "mempalace_3_11": ref}, indent=2))

    # (label, key, higher is better, goal ratio from issue #20)
    rows = [
        ("cold start → first status (ms)", "cold_start_ms", False, 20),
        ("status p50 (ms)", "status_ms", False, 1),
        ("MCP ping p50: the client's and transport's floor (ms)", "ping_ms", False, None),
        ("get_aaak_spec p50: one call's overhead (ms)", "round_trip_ms", False, None),
        ("search p50, limit 5 (ms)", "search_ms", False, 10),
        ("add_drawer p50, short text (ms): ours checks for near-duplicates, 3.11 for the same id",
         "add_drawer_ms", False, 10),
        ("check_duplicate p50, short text (ms)", "check_duplicate_ms", False, None),
        ("file unless a near-duplicate is there: ours add_drawer, "
         "3.11 check_duplicate + add_drawer (ms)", "checked_add_ms", False, 10),
        ("kg_add p50 (ms)", "kg_add_ms", False, 5),
        ("kg_query p50 (ms)", "kg_query_ms", False, 2),
        ("server RSS after the run (MiB)", "rss_mib", False, 3),
        ("  of which anonymous: allocated by the process (MiB)", "rss_anon_mib", False, None),
        ("  of which file pages: code, libraries, mapped model (MiB)", "rss_file_mib", False, None),
        ("mining, drawers/s", "mining_drawers_per_s", True, None),
    ]
    print(f"\ncorpus: {corpus} — {ours['drawers']} drawers here, {ref['drawers']} in 3.11\n")
    print("| per call | MemPalace 3.11 | ours | ratio | goal |")
    print("| --- | --- | --- | --- | --- |")
    for label, key, higher_better, goal in rows:
        a, b = ref[key], ours[key]
        ratio = (b / a if higher_better else a / b) if a and b else float("nan")
        verdict = "" if goal is None else (f"≥ {goal}× " + ("met" if ratio >= goal else "not met"))
        print(f"| {label} | {a:.1f} | {b:.1f} | {ratio:.1f}× | {verdict} |")


if __name__ == "__main__":
    main()
