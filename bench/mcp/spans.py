#!/usr/bin/env python3
"""Where one MCP call's time goes: runs calls against an existing palace with span timing on.

The server logs each span it closes (MEMPALACE_LOG enables them at debug level; see
examples/src/main.rs), with its busy and idle time. This drives `--calls` calls of each tool
through one MCP client and prints the p50 of each span per tool, next to the client's own round
trip, so a per-call cost can be split into the MCP layer, the palace, the store, the embedder and
the knowledge graph.

    python3 bench/mcp/spans.py --bin $CARGO_TARGET_DIR/release/mempalace --palace /tmp/mcp-bench/palace-rust
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "retrieval"))
from run import McpClient  # noqa: E402  (bench/retrieval/run.py)

# The queries of bench/mcp/run.py (loaded under its own name: both benches call theirs run.py).
_spec = importlib.util.spec_from_file_location("mcp_run", Path(__file__).resolve().parent / "run.py")
mcp_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mcp_run)
QUERIES = mcp_run.QUERIES
SPAN_LOG = ("mempalace_cli=debug,mempalace_core=debug,mempalace_store_lance=debug,"
            "mempalace_kg_sqlite=debug,mempalace_embed_candle=debug,warn")
# "2026-...  DEBUG call_tool{tool=mempalace_search}:search_with: mempalace_core::palace: close time.busy=1.2ms time.idle=3.4µs"
CLOSE = re.compile(r"\s(\S+): [\w:]+: close time\.busy=([\d.]+)(ns|µs|us|ms|s) time\.idle=([\d.]+)(ns|µs|us|ms|s)")
UNIT = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1000.0}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


WORDS = ("harbour lantern quartz violin glacier pepper saddle comet orchard falcon marble ribbon "
         "canyon walnut meteor tulip anchor biscuit lizard copper velvet rocket meadow oyster "
         "thunder pencil island garlic bamboo crystal puzzle dragon cactus ember nectar pylon").split()


def note(i: int) -> str:
    """A short note no other call files: twelve words drawn by the call's number."""
    rng = random.Random(i)
    return " ".join(rng.sample(WORDS, 12)) + "."


def span_name(path: str) -> str:
    """`call_tool{tool=x}:search_with` → `search_with` (the innermost span)."""
    return re.sub(r"\{[^}]*\}", "", path).split(":")[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--palace", type=Path, required=True, help="an existing palace (it gets drawers and facts added)")
    ap.add_argument("--calls", type=int, default=40)
    a = ap.parse_args()
    err = Path(tempfile.mkdtemp(prefix="mp-spans-")) / "server.err"
    env = dict(os.environ, MEMPALACE_LOG=SPAN_LOG, NO_COLOR="1")
    client = McpClient([a.bin, "--palace", str(a.palace), "mcp"], env, err, 600)
    client.initialize()
    client.call_tool("mempalace_search", {"query": "warm up", "limit": 5})
    stamp = int(time.time() * 1000)
    tools = [
        ("mempalace_status", lambda i: {}),
        ("mempalace_search", lambda i: {"query": QUERIES[i % len(QUERIES)], "limit": 5}),
        ("mempalace_add_drawer", lambda i: {"wing": "bench", "room": "notes",
                                            "content": f"Span note {stamp}-{i}: " + note(i)}),
        ("mempalace_kg_add", lambda i: {"subject": f"svc_{stamp}_{i}", "predicate": "depends_on",
                                        "object": f"db_{i % 7}"}),
        ("mempalace_kg_query", lambda i: {"entity": f"svc_{stamp}_{i}"}),
    ]
    round_trips = {}
    marks = {}
    for tool, args in tools:
        times = []
        marks[tool] = err.stat().st_size
        for i in range(a.calls):
            t = time.perf_counter()
            client.call_tool(tool, args(i))
            times.append((time.perf_counter() - t) * 1000)
        round_trips[tool] = statistics.median(times)
        time.sleep(0.2)
    client.close()
    text = ANSI.sub("", err.read_text(errors="replace"))
    per_tool: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for line in text.splitlines():
        m = CLOSE.search(line)
        tool_m = re.search(r"call_tool\{tool=(\w+)\}", line)
        if not m or not tool_m:
            continue
        busy = float(m.group(2)) * UNIT[m.group(3)]
        idle = float(m.group(4)) * UNIT[m.group(5)]
        per_tool[tool_m.group(1)][span_name(m.group(1))].append(busy + idle)
    print(f"| tool | client round trip p50 ms | span | n | p50 ms (busy + idle) |")
    print("|---|---:|---|---:|---:|")
    for tool, _ in tools:
        spans = per_tool.get(tool, {})
        first = True
        for name, xs in sorted(spans.items(), key=lambda kv: -statistics.median(kv[1])):
            rt = f"{round_trips[tool]:.2f}" if first else ""
            print(f"| {tool if first else ''} | {rt} | {name} | {len(xs)} | {statistics.median(xs):.2f} |")
            first = False
        if first:
            print(f"| {tool} | {round_trips[tool]:.2f} | (no spans logged) | | |")


if __name__ == "__main__":
    main()
