#!/usr/bin/env python3
"""Lists the functions the MCP server runs, for the release link's hot-first code order.

The release `mempalace` binary is linked with `examples/link/hot-functions.txt` as lld's
symbol ordering file, so the code a server runs sits together at the start of `.text` and
a server maps a few tens of MiB of the binary instead of most of it (see
`examples/link/README.md`). This script makes that file:

    MEMPALACE_LINK_MAP=/tmp/mempalace.map cargo build --release -p mempalace-cli --bin mempalace
    python3 scripts/hot_functions.py --bin "$CARGO_TARGET_DIR/release/mempalace" \\
        --map /tmp/mempalace.map --palace /tmp/mcp-bench/palace-rust \\
        --out examples/link/hot-functions.txt

It starts the server on a copy of a palace large enough for the ANN index (the one
`bench/mcp/run.py` leaves, `palace-rust`, is), runs the calls of that bench and one call of
most other tools, twice:
- under valgrind's `exp-bbv` tool, which lists every basic block the process ran: every
  function run, once or often, in the order first run;
- natively under `perf record`: valgrind's CPU has no AVX-512, so the kernels that only run
  on such CPUs (the embedder's) come from these samples.
The functions are named from the lld map file of the same link (the binary is stripped),
valgrind's first, in the order they first ran, then the ones only perf saw. Needs valgrind,
perf and readelf.
"""

import argparse
import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "retrieval"))
from run import McpClient  # noqa: E402

QUERIES = [
    "how are command line arguments parsed", "reading a zip archive", "thread pool executor",
    "parse an email message", "compare two sequences of lines", "format dates and times",
    "json decoding of nested objects", "random number generation", "http server request handler",
    "temporary files and directories",
]  # other words than the bench's queries: they run the same code


def workload(client: McpClient):
    """The calls: the MCP bench's, and one of most other tools."""
    call = client.call_tool
    client.request("tools/list", {})
    call("mempalace_status", {})
    call("mempalace_search", {"query": "warm up", "limit": 5})
    call("mempalace_get_aaak_spec", {})
    for i in range(20):
        call("mempalace_search", {"query": QUERIES[i % len(QUERIES)], "limit": 5})
    stamp = int(time.time() * 1000)
    for i in range(24):
        call("mempalace_add_drawer", {
            "wing": "bench", "room": "notes",
            "content": f"Note {stamp}-{i}: the {QUERIES[i % len(QUERIES)]} step was reviewed."})
    for i in range(10):
        call("mempalace_kg_add", {"subject": f"service_{i}", "predicate": "depends_on", "object": f"db_{i % 3}"})
        call("mempalace_kg_query", {"entity": f"service_{i}"})
    for tool, args in [
        ("mempalace_check_duplicate", {"content": "the thread pool executor step was reviewed"}),
        ("mempalace_list_wings", {}), ("mempalace_list_rooms", {}), ("mempalace_get_taxonomy", {}),
        ("mempalace_list_drawers", {"limit": 5}), ("mempalace_kg_stats", {}),
        ("mempalace_kg_timeline", {"entity": "service_1"}), ("mempalace_graph_stats", {}),
        ("mempalace_diary_write", {"agent_name": "probe", "entry": "ran the hot-code workload"}),
        ("mempalace_diary_read", {"agent_name": "probe"}), ("mempalace_find_tunnels", {}),
        ("mempalace_traverse", {"start_room": "notes"}),
    ]:
        try:
            call(tool, args)
        except Exception:  # a tool refusing these arguments still ran its code
            pass
    for _ in range(5):
        call("mempalace_status", {})


def serve(prefix: list[str], binary: Path, palace: Path, work: Path, label: str, timeout: float):
    """Runs the workload on a fresh copy of `palace`, the server started under `prefix`."""
    copy = work / f"palace-{label}"
    shutil.copytree(palace, copy)
    client = McpClient(prefix + [str(binary), "--palace", str(copy), "mcp"], dict(os.environ, NO_COLOR="1"),
                       work / f"{label}.err", timeout)
    client.initialize()
    workload(client)
    client.close()


def valgrind_blocks(binary: Path, palace: Path, work: Path) -> list[int]:
    """Addresses (as the binary's link placed them) of the blocks run, in first-run order."""
    pcs = work / "blocks.txt"
    serve(["valgrind", "--tool=exp-bbv", f"--pc-out-file={pcs}", f"--bb-out-file={work / 'bbv'}",
           "--interval-size=1000000000"], binary, palace, work, "valgrind", 1200)
    entry = elf_entry(binary)
    blocks: list[tuple[int, int]] = []
    for line in open(pcs):
        parts = line.split(":")
        if parts[0] == "F" and len(parts) >= 3:
            blocks.append((int(parts[1]), int(parts[2], 16)))
    # Valgrind loads a position-independent executable at its own (page-aligned) base: the
    # lowest block a whole number of pages above the entry point is the entry point.
    starts = sorted(pc for _, pc in blocks)
    base = next((pc - entry for pc in starts if pc >= entry and (pc - entry) % 4096 == 0), None)
    if base is None:
        raise SystemExit("could not find the binary's load address in valgrind's blocks")
    return [pc - base for _, pc in sorted(blocks)]


def perf_samples(binary: Path, palace: Path, work: Path) -> list[int]:
    """Addresses (as the link placed them) of the binary's code `perf record` sampled."""
    data = work / "perf.data"
    serve(["perf", "record", "-q", "-F", "4999", "-o", str(data), "--"], binary, palace, work, "perf", 600)
    out = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,dso", "--show-mmap-events"],
                         capture_output=True, text=True).stdout
    mapping = re.compile(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: r-xp (\S+)$")
    delta = segment_delta(binary)
    code = None  # (start, end, link address of start)
    found = []
    for line in out.splitlines():
        m = mapping.search(line)
        if m and m.group(4) == str(binary):
            start, length, offset = (int(m.group(i), 16) for i in (1, 2, 3))
            code = (start, start + length, offset + delta)
            continue
        cols = line.split()
        if code and len(cols) == 2 and cols[1] == f"({binary})":
            ip = int(cols[0], 16)
            if code[0] <= ip < code[1]:
                found.append(ip - code[0] + code[2])
    return found


def segment_delta(binary: Path) -> int:
    """Address minus file offset of the executable segment."""
    out = subprocess.run(["readelf", "-lW", str(binary)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        cols = line.split()
        if cols[:1] == ["LOAD"] and "E" in cols[6:8]:
            return int(cols[2], 16) - int(cols[1], 16)
    raise SystemExit(f"no executable segment in {binary}")


def elf_entry(binary: Path) -> int:
    """The ELF entry point."""
    out = subprocess.run(["readelf", "-h", str(binary)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if "Entry point address" in line:
            return int(line.split()[-1], 16)
    raise SystemExit(f"no entry point in {binary}")


def text_sections(map_file: Path) -> list[tuple[int, int, list[str]]]:
    """(address, size, symbols) of every input section of `.text` in an lld map file."""
    sections: list[tuple[int, int, list[str]]] = []
    in_text = False
    with open(map_file, errors="replace") as f:
        next(f)  # the header
        for line in f:
            cols = line.split(maxsplit=4)
            if len(cols) < 5:
                continue
            vma, size, name = int(cols[0], 16), int(cols[2], 16), cols[4].strip()
            # lld writes `%16x %16x %8x %5x ` and then indents the name by 8 columns per
            # level: output section, input section, symbol.
            level = (line.index(name, 49) - 49) // 8
            if level == 0:
                in_text = name == ".text"
            elif in_text and level == 1:
                sections.append((vma, size, []))
            elif in_text and sections:
                sections[-1][2].append(name)
    return sections


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", type=Path, required=True, help="release binary linked with the map below")
    ap.add_argument("--map", type=Path, required=True, help="lld map file of that link")
    ap.add_argument("--palace", type=Path, required=True,
                    help="a palace to copy, with at least 5,000 drawers so searches use the ANN index")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mp-hot-"))
    binary = work / "mempalace"
    shutil.copy2(args.bin, binary)
    sections = text_sections(args.map)
    starts = [vma for vma, _, _ in sections]

    def section_of(address: int) -> int | None:
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < sections[i][0] + max(sections[i][1], 1):
            return i
        return None

    order: list[int] = []
    seen: set[int] = set()
    ran = valgrind_blocks(binary, args.palace, work)
    sampled = perf_samples(binary, args.palace, work)
    for address in ran + sampled:
        i = section_of(address)
        if i is not None and i not in seen:
            seen.add(i)
            order.append(i)
    names: list[str] = []
    named: set[str] = set()
    for i in order:
        # One symbol names its section; local symbols of one name in several sections (the
        # same function in two codegen units) are one entry, which orders them all.
        for name in sections[i][2][:1]:
            if name not in named:
                named.add(name)
                names.append(name)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(n + "\n" for n in names))
    size = sum(sections[i][1] for i in order)
    print(f"{len(ran)} blocks run, {len(sampled)} samples: {len(names)} functions, "
          f"{size / 2**20:.1f} MiB of code, written to {args.out}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
