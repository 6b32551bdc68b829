#!/usr/bin/env python3
"""Run the retrieval-recall benchmark through the real `mempalace` CLI and MCP server.

For every chat of the chosen split: `mempalace --palace P init DIR --wing W` and
`mempalace --palace P mine DIR --wing W --quiet` (DIR = a copy of the chat's session files,
one file per session), all chats in ONE palace, one wing per chat. Then ONE
`mempalace --palace P mcp` server is started over stdio and every question is sent as a
JSON-RPC 2.0 `tools/call` of `mempalace_search` with {query, wing, limit: 30, mode}.
Hits map to sessions by `source_file` (".txt" stripped), duplicates dropped in rank order.

Metrics, per run (= system + mode), per category and overall:
  R@k (recall_any, the headline): share of questions with at least one evidence session
      among the first k distinct sessions.
  all@k (recall_all): share of questions with every evidence session in the first k.
  latency p50/p95 of the tools/call round trips (client-side wall clock).

Standard library only. See README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DEFAULT_CACHE = Path(os.path.expanduser("~/.cache/mempalace/bench/retrieval"))
KS = (1, 5, 10)
PROTOCOL_VERSION = "2025-06-18"


def default_bin() -> str:
    if os.environ.get("MEMPALACE_BIN"):
        return os.environ["MEMPALACE_BIN"]
    cands = []
    if os.environ.get("CARGO_TARGET_DIR"):
        cands.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "mempalace")
    home_target = Path(os.path.expanduser("~/.cache/mempalace/target"))
    cands += [home_target / "release" / "mempalace", home_target / "debug" / "mempalace"]
    for c in cands:
        if c.exists():
            return str(c)
    return str(cands[0])


# --------------------------------------------------------------------------------------------
# MCP over stdio


class McpError(Exception):
    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class McpClient:
    """Minimal MCP client: newline-delimited JSON-RPC 2.0 over a child's stdin/stdout."""

    def __init__(self, cmd: list[str], env: dict | None, stderr_path: Path, timeout: float):
        self.timeout = timeout
        self._stderr = open(stderr_path, "ab")
        # Buffered pipes: an unbuffered stdout is read one byte per system call, which put
        # ~3 ms under a 20 KB search answer, whichever server sent it.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     env=env, bufsize=-1)
        self._q: queue.Queue = queue.Queue()
        self._next = 1
        self.stray_lines = 0
        threading.Thread(target=self._reader, daemon=True).start()

    def _reader(self):
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                self.stray_lines += 1
                continue
            self._q.put(msg)
        self._q.put(None)

    def _send(self, msg: dict):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        rid = self._next
        self._next += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer to {method} within {self.timeout}s")
            try:
                resp = self._q.get(timeout=left)
            except queue.Empty:
                continue
            if resp is None:
                raise RuntimeError(f"MCP server exited (rc={self.proc.poll()}) while waiting for {method}")
            if resp.get("id") != rid:  # notifications, or answers to abandoned requests
                continue
            if "error" in resp:
                raise McpError(resp["error"].get("code"), resp["error"].get("message"))
            return resp.get("result", {})

    def notify(self, method: str, params: dict | None = None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def initialize(self) -> dict:
        res = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                          "clientInfo": {"name": "mempalace-retrieval-bench", "version": "1"}})
        self.notify("notifications/initialized")
        return res

    def call_tool(self, name: str, arguments: dict) -> dict:
        res = self.request("tools/call", {"name": name, "arguments": arguments})
        if res.get("isError"):
            raise McpError("isError", tool_text(res)[:500])
        if isinstance(res.get("structuredContent"), dict):
            return res["structuredContent"]
        text = tool_text(res)
        try:
            return json.loads(text)
        except ValueError:
            raise McpError("parse", f"tool answer is not JSON: {text[:200]!r}")

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._stderr.close()


def tool_text(res: dict) -> str:
    return "".join(c.get("text", "") for c in res.get("content", []) if c.get("type") == "text")


# --------------------------------------------------------------------------------------------
# systems under test


class System:
    """How to init, mine and serve one palace with one implementation."""

    label = "rust"
    # Whether add_drawer itself refuses a near-duplicate (similarity >= 0.9), as the seed's
    # design has it; 3.11's add_drawer only checks for the same id.
    add_checks_duplicates = True

    def __init__(self, binary: str, env: dict | None = None):
        self.binary, self.env = binary, env

    def init_cmd(self, palace: Path, d: Path, wing: str) -> list[str]:
        return [self.binary, "--palace", str(palace), "init", str(d), "--wing", wing]

    def mine_cmd(self, palace: Path, d: Path, wing: str) -> list[str]:
        return [self.binary, "--palace", str(palace), "mine", str(d), "--wing", wing, "--quiet"]

    def mcp_cmd(self, palace: Path) -> list[str]:
        return [self.binary, "--palace", str(palace), "mcp"]

    def search_args(self, query: str, wing: str, limit: int, mode: str | None) -> dict:
        a = {"query": query, "wing": wing, "limit": limit}
        if mode is not None:
            a["mode"] = mode
        return a


class Python311(System):
    """MemPalace 3.11 (PyPI `mempalace==3.11.0`): its CLI mines, `mempalace-mcp` serves."""

    label = "mempalace-3.11"
    add_checks_duplicates = False

    def init_cmd(self, palace, d, wing):
        return [self.binary, "--palace", str(palace), "init", str(d), "--yes", "--no-llm", "--direct"]

    def mine_cmd(self, palace, d, wing):
        return [self.binary, "--palace", str(palace), "mine", str(d), "--wing", wing, "--direct"]

    def mcp_cmd(self, palace):
        bindir = Path(self.binary).parent
        if (bindir / "mempalace-mcp").exists():
            return [str(bindir / "mempalace-mcp"), "--palace", str(palace)]
        return [str(bindir / "python"), "-m", "mempalace.mcp_server", "--palace", str(palace)]


# --------------------------------------------------------------------------------------------
# benchmark


def load_dataset(cache: Path, split: str, limit_chats: int | None, only: list[str] | None = None):
    path = cache / "dataset.json"
    if not path.exists():
        sys.exit(f"{path} not found: run bench/retrieval/build_dataset.py first")
    data = json.loads(path.read_text(encoding="utf-8"))
    chats = []
    for ch in data["chats"]:
        qs = [q for q in ch["questions"] if split == "all" or q["split"] == split]
        if qs:
            chats.append({**ch, "questions": qs})
    if only:
        unknown = set(only) - {c["chat_id"] for c in chats}
        if unknown:
            sys.exit(f"--chats: no questions of split {split!r} in {sorted(unknown)}")
        chats = [c for c in chats if c["chat_id"] in only]
    if limit_chats:
        chats = chats[:limit_chats]
    return data, chats


def wing_of(chat_id: str) -> str:
    return chat_id.lower().replace("-", "_").replace(" ", "_")


def run_cmd(cmd: list[str], env, log: Path) -> float:
    t0 = time.monotonic()
    with open(log, "ab") as f:
        f.write(("\n$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f, env=env)
    if r.returncode != 0:
        sys.exit(f"command failed (exit {r.returncode}), see {log}:\n  {' '.join(cmd)}\n"
                 + tail(log))
    return time.monotonic() - t0


def tail(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def mine_all(system: System, work: Path, cache: Path, chats: list, skip_mine: bool) -> dict:
    palace = work / "palace"
    log = work / "mine.log"
    info = {"palace": str(palace), "mine_seconds": 0.0, "per_chat_seconds": {}}
    if skip_mine:
        if not palace.exists():
            sys.exit(f"--skip-mine: no palace at {palace}")
        return info
    for ch in chats:
        src = cache / "chats" / ch["chat_id"]
        if not src.is_dir():
            sys.exit(f"{src} missing: re-run build_dataset.py")
        d = work / "corpus" / ch["chat_id"]
        if d.exists():
            shutil.rmtree(d)
        shutil.copytree(src, d)
        wing = wing_of(ch["chat_id"])
        secs = run_cmd(system.init_cmd(palace, d, wing), system.env, log)
        secs += run_cmd(system.mine_cmd(palace, d, wing), system.env, log)
        info["per_chat_seconds"][ch["chat_id"]] = round(secs, 2)
        info["mine_seconds"] += secs
        print(f"  [{system.label}] mined {ch['chat_id']} ({len(ch['sessions'])} sessions) in {secs:.1f}s",
              file=sys.stderr)
    info["mine_seconds"] = round(info["mine_seconds"], 2)
    return info


def hit_session(hit: dict) -> str | None:
    src = hit.get("source_file") or hit.get("source_path")
    if not src:
        return None
    name = os.path.basename(str(src))
    return name[:-4] if name.endswith(".txt") else name


def search_runs(system: System, work: Path, chats: list, modes: list[str], limit: int, timeout: float,
                warmup: int) -> list[dict]:
    """One MCP server; every requested mode (or 'default' when `mode` is refused)."""
    client = McpClient(system.mcp_cmd(work / "palace"), system.env, work / "mcp_stderr.log", timeout)
    runs = []
    try:
        init = client.initialize()
        server = init.get("serverInfo", {})
        questions = [(ch, q) for ch in chats for q in ch["questions"]]
        probe_ch, probe_q = questions[0]

        # warm-up (model load, caches): not timed, not scored
        plan: list[tuple[str, str | None]] = []
        probe = lambda mode: client.call_tool(  # noqa: E731
            "mempalace_search", system.search_args(probe_q["question"], wing_of(probe_ch["chat_id"]), limit, mode))
        probe(None)  # must work: otherwise the server is broken, not just missing `mode`
        for mode in modes:
            try:
                probe(mode)
                plan.append((mode, mode))
            except McpError as e:
                print(f"  [{system.label}] mode {mode!r} refused ({e}); skipping it", file=sys.stderr)
        if not plan:
            if modes:
                print(f"  [{system.label}] no mode accepted: searching without `mode`, labelled 'default'",
                      file=sys.stderr)
            plan = [("default", None)]
        for _ in range(warmup):
            for _label, mode in plan:
                client.call_tool("mempalace_search", system.search_args(probe_q["question"],
                                                                         wing_of(probe_ch["chat_id"]), limit, mode))

        for label, mode in plan:
            per_q, lat, errors, answered_modes = [], [], 0, {}
            for ch, q in questions:
                args = system.search_args(q["question"], wing_of(ch["chat_id"]), limit, mode)
                t0 = time.perf_counter()
                try:
                    payload = client.call_tool("mempalace_search", args)
                except McpError as e:
                    errors += 1
                    payload = {"results": [], "error": str(e)}
                lat.append((time.perf_counter() - t0) * 1000.0)
                if "mode" in payload:  # the channels the server says it used
                    answered_modes[str(payload["mode"])] = answered_modes.get(str(payload["mode"]), 0) + 1
                ranked, seen, foreign = [], set(), 0
                for hit in payload.get("results", []):
                    if hit.get("wing") not in (None, wing_of(ch["chat_id"])):
                        foreign += 1
                    s = hit_session(hit)
                    if s is not None and s not in seen:
                        seen.add(s)
                        ranked.append(s)
                per_q.append({"question_id": q["question_id"], "chat_id": ch["chat_id"], "category": q["category"],
                              "split": q["split"],
                              "evidence": q["evidence_sessions"], "ranked_sessions": ranked,
                              "n_hits": len(payload.get("results", [])), "foreign_wing_hits": foreign,
                              "latency_ms": round(lat[-1], 2), **({"error": payload["error"]} if "error" in payload else {})})
            foreign = sum(q["foreign_wing_hits"] for q in per_q)
            runs.append({"system": system.label, "server": server, "mode": label, "questions": per_q,
                         "errors": errors, "foreign_wing_hits": foreign, "answered_modes": answered_modes,
                         "latency_ms": latency_stats(lat)})
            odd = {m: n for m, n in answered_modes.items() if mode is not None and m != mode}
            print(f"  [{system.label}] {label}: {len(per_q)} searches, {errors} errors"
                  + (f", WARNING {foreign} hits from another wing" if foreign else "")
                  + (f", WARNING server answered mode {odd}" if odd else ""), file=sys.stderr)
    except (RuntimeError, TimeoutError, McpError, OSError) as e:
        client.close()
        sys.exit(f"[{system.label}] MCP server failed: {e}\n--- {work / 'mcp_stderr.log'} (tail):\n"
                 + tail(work / "mcp_stderr.log"))
    client.close()
    return runs


def percentile(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def latency_stats(lat: list[float]) -> dict:
    return {"n": len(lat), "p50": round(percentile(lat, 50), 2), "p95": round(percentile(lat, 95), 2),
            "mean": round(statistics.fmean(lat), 2) if lat else None, "max": round(max(lat), 2) if lat else None}


def score(per_q: list[dict], categories: list[str]) -> dict:
    groups = {"overall": per_q}
    for c in categories:
        groups[c] = [q for q in per_q if q["category"] == c]
    out = {}
    for name, qs in groups.items():
        if not qs:
            continue
        m = {"n": len(qs)}
        for k in KS:
            top = [set(q["ranked_sessions"][:k]) for q in qs]
            m[f"R@{k}"] = sum(bool(t & set(q["evidence"])) for t, q in zip(top, qs)) / len(qs)
            m[f"all@{k}"] = sum(set(q["evidence"]) <= t for t, q in zip(top, qs)) / len(qs)
        out[name] = m
    return out


def fmt(x: float) -> str:
    return f"{x:.3f}"


def report_tables(runs: list[dict], categories: list[str], split: str) -> str:
    lines = [f"### Retrieval recall, split `{split}` (R@k = recall_any over distinct sessions; all@k = every evidence session)", "",
             "| run | category | n | R@1 | R@5 | R@10 | all@5 | all@10 |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        name = f"{r['system']}/{r['mode']}"
        for cat in ["overall"] + categories:
            m = r["scores"].get(cat)
            if not m:
                continue
            cat_s = f"**{cat}**" if cat == "overall" else cat
            lines.append(f"| {name} | {cat_s} | {m['n']} | {fmt(m['R@1'])} | {fmt(m['R@5'])} | {fmt(m['R@10'])} | "
                         f"{fmt(m['all@5'])} | {fmt(m['all@10'])} |")
        for sp, sc in r.get("scores_by_split", {}).items():
            m = sc["overall"]
            lines.append(f"| {name} | overall, split {sp} | {m['n']} | {fmt(m['R@1'])} | {fmt(m['R@5'])} | "
                         f"{fmt(m['R@10'])} | {fmt(m['all@5'])} | {fmt(m['all@10'])} |")
    lines += ["", "### Search latency (mempalace_search tools/call round trip over stdio) and mining time", "",
              "| run | searches | errors | p50 ms | p95 ms | mine s (all chats) |", "|---|---:|---:|---:|---:|---:|"]
    for r in runs:
        lat = r["latency_ms"]
        lines.append(f"| {r['system']}/{r['mode']} | {lat['n']} | {r['errors']} | {lat['p50']:.1f} | {lat['p95']:.1f} | "
                     f"{r.get('mine_seconds', 0):.1f} |")
    # compact pivot: R@5 per category per run
    lines += ["", "### R@5 by category", "", "| run | " + " | ".join(["overall"] + categories) + " |",
              "|---|" + "---:|" * (len(categories) + 1)]
    for r in runs:
        cells = [fmt(r["scores"][c]["R@5"]) if c in r["scores"] else "-" for c in ["overall"] + categories]
        lines.append(f"| {r['system']}/{r['mode']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where build_dataset.py wrote the data")
    ap.add_argument("--split", choices=["tune", "report", "all"], default="report")
    ap.add_argument("--limit-chats", type=int, default=None, help="only the first N chats of the split")
    ap.add_argument("--chats", default=None, help="comma list of chat ids to run (after --split)")
    ap.add_argument("--modes", default="vector,lexical,hybrid",
                    help="comma list of `mode` values for mempalace_search (default vector,lexical,hybrid)")
    ap.add_argument("--limit", type=int, default=30, help="mempalace_search limit (default 30, the protocol's)")
    ap.add_argument("--bin", default=None, help="mempalace binary [$MEMPALACE_BIN, else $CARGO_TARGET_DIR/release, "
                                                  "else ~/.cache/mempalace/target/{release,debug}]")
    ap.add_argument("--palace-dir", type=Path, default=None,
                    help="work dir for palaces and corpus copies (default: a temp dir, deleted afterwards)")
    ap.add_argument("--keep", action="store_true", help="keep the temp work dir")
    ap.add_argument("--skip-mine", action="store_true", help="reuse the palace already in --palace-dir")
    ap.add_argument("--no-rust", action="store_true", help="skip the Rust binary (e.g. only --reference-311)")
    ap.add_argument("--reference-311", metavar="MEMPALACE_CLI", default=None,
                    help="also run MemPalace 3.11's own CLI + MCP server (path to its `mempalace` script, "
                         "e.g. VENV/bin/mempalace); searched without `mode`")
    ap.add_argument("--reference-311-home", type=Path, default=None,
                    help="HOME for the 3.11 run (where its ONNX model cache lives), e.g. /tmp/mp311/home")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for one MCP answer")
    ap.add_argument("--warmup", type=int, default=2, help="untimed warm-up searches per mode (default 2)")
    ap.add_argument("--out", type=Path, default=None, help="results JSON (default <cache>/results/<split>-<time>.json)")
    ap.add_argument("--per-question", action="store_true", help="include per-question rankings in the JSON")
    args = ap.parse_args()

    cache = args.cache_dir.expanduser()
    data, chats = load_dataset(cache, args.split, args.limit_chats,
                               [c.strip() for c in args.chats.split(",")] if args.chats else None)
    if not chats:
        sys.exit(f"no questions in split {args.split!r}")
    categories = data.get("categories") or sorted({q["category"] for ch in chats for q in ch["questions"]})
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    nq = sum(len(ch["questions"]) for ch in chats)
    print(f"split {args.split}: {len(chats)} chats, {sum(len(c['sessions']) for c in chats)} sessions, {nq} questions",
          file=sys.stderr)

    tmp = None
    if args.palace_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="mp-retrieval-"))
        work_root = tmp
    else:
        work_root = args.palace_dir.expanduser().resolve()
        work_root.mkdir(parents=True, exist_ok=True)

    systems: list[System] = []
    if not args.no_rust:
        binary = args.bin or default_bin()
        if not Path(binary).exists():
            sys.exit(f"mempalace binary not found at {binary} (build it, or set MEMPALACE_BIN / --bin)")
        if "/debug/" in binary:
            print(f"note: {binary} is a debug build; mining and latency will be slow", file=sys.stderr)
        systems.append(System(str(Path(binary).resolve())))
    if args.reference_311:
        env = dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", PYTHONUNBUFFERED="1")
        if args.reference_311_home:
            env["HOME"] = str(args.reference_311_home.expanduser().resolve())
        systems.append(Python311(str(Path(args.reference_311).expanduser().absolute()), env))
    if not systems:
        sys.exit("nothing to run (--no-rust without --reference-311)")

    all_runs = []
    failed = True
    try:
        for system in systems:
            work = work_root / system.label
            work.mkdir(parents=True, exist_ok=True)
            info = mine_all(system, work, cache, chats, args.skip_mine)
            # MemPalace 3.11's mempalace_search has no `mode`: one 'default' run
            sys_modes = [] if isinstance(system, Python311) else modes
            runs = search_runs(system, work, chats, sys_modes, args.limit, args.timeout, args.warmup)
            for r in runs:
                r["mine_seconds"] = info["mine_seconds"]
                r["mine_per_chat_seconds"] = info["per_chat_seconds"]
                r["scores"] = score(r["questions"], categories)
                splits = sorted({q["split"] for q in r["questions"]})
                if len(splits) > 1:
                    r["scores_by_split"] = {sp: score([q for q in r["questions"] if q["split"] == sp], categories)
                                            for sp in splits}
            all_runs += runs
        failed = False
    finally:
        if tmp is not None and not args.keep and not failed:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp is not None:
            print(f"work dir kept: {tmp}", file=sys.stderr)

    table = report_tables(all_runs, categories, args.split)
    print(table)
    out = args.out or cache / "results" / f"{args.split}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "split": args.split, "limit": args.limit, "chats": [c["chat_id"] for c in chats], "n_questions": nq,
        "dataset": {"version": data.get("version"), "seed": data.get("seed"), "sources": data.get("sources")},
        "metric_note": "R@k = recall_any: a question counts when any evidence session is among the first k "
                       "distinct sessions of the ranking (hits deduplicated by source_file, rank order kept); "
                       "all@k = every evidence session among the first k.",
        "runs": [{k: v for k, v in r.items() if k != "questions" or args.per_question} for r in all_runs],
        "markdown": table,
    }
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nresults: {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
