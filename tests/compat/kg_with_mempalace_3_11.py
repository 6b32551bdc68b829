"""The knowledge graph both ways with MemPalace 3.11: a graph written by the `mempalace` binary
is queried by 3.11's KnowledgeGraph class and one written by 3.11 by the binary; every query
(dates and UTC instants around a supersede and an invalidate, hyphenated and apostrophe
names) must give the same facts.

Run with the Python of a venv holding mempalace==3.11.0:

    python3 -m venv /tmp/mp311 && /tmp/mp311/bin/pip install mempalace==3.11.0
    /tmp/mp311/bin/python tests/compat/kg_with_mempalace_3_11.py [MEMPALACE_BIN]

MEMPALACE_BIN defaults to the debug build in ~/.cache/mempalace/target. Exit status 1 on any
difference.
"""
import json, os, shutil, subprocess, sys, tempfile
from mempalace.knowledge_graph import KnowledgeGraph

B = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser(
    "~/.cache/mempalace/target/debug/mempalace")
W = tempfile.mkdtemp(prefix="kg_compat_")

def rust(palace, *args):
    out = subprocess.run([B, "--palace", palace, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{args}: {out.stderr}")
    return out.stdout

def rust_query(palace, entity, as_of=None):
    args = ["kg", "query", entity, "--json"] + (["--as-of", as_of] if as_of else [])
    v = json.loads(rust(palace, *args))
    return sorted((f["subject"], f["predicate"], f["object"]) for f in v["facts"])

def py_query(path, entity, as_of=None):
    kg = KnowledgeGraph(db_path=path)
    rows = kg.query_entity(entity, as_of=as_of, direction="both")
    kg.close()
    return sorted((r["subject"], r["predicate"], r["object"]) for r in rows)

QUERIES = [("Alice", None), ("Alice", "2025-05-31"), ("Alice", "2025-06-01"),
           ("Alice", "2025-05-31T23:59:59Z"), ("Alice", "2025-06-01T00:00:00Z"),
           ("GPT-4", None), ("gpt-4", "2023-03-14"), ("Bob", "2025-01-31"),
           ("Bob", "2025-01-31T23:59:59Z"), ("Bob", "2025-02-01"), ("O'Brien", None)]

def compare(label, path, palace):
    bad = 0
    for e, at in QUERIES:
        r, p = rust_query(palace, e, at), py_query(path, e, at)
        status = "ok " if r == p else "DIFF"
        bad += r != p
        print(f"{label} {status} {e!r} as_of={at}: rust={r} py={p}")
    return bad

# 1. Written here, read by 3.11.
pal = f"{W}/rust_palace"
os.makedirs(pal)
for args in [
    ["kg", "add", "GPT-4", "made by", "OpenAI", "--valid-from", "2023-03-14"],
    ["kg", "add", "Alice", "works_at", "Acme", "--valid-from", "2024-01-01"],
    ["kg", "supersede", "Alice", "works_at", "Acme", "Globex", "--at", "2025-06-01"],
    ["kg", "add", "Bob", "plays", "chess", "--valid-from", "2020-01-01"],
    ["kg", "invalidate", "Bob", "plays", "chess", "--ended", "2025-01-31"],
    ["kg", "add", "O'Brien", "knows", "Alice"],
]:
    rust(pal, *args)
bad = compare("rust->py", f"{pal}/knowledge_graph.sqlite3", pal)

# 2. Written by 3.11, read here.
pal2 = f"{W}/py_palace"
os.makedirs(pal2)
rust(pal2, "kg", "add", "Zed", "is", "here")  # makes the palace ours; 3.11 then writes its graph
kg = KnowledgeGraph(db_path=f"{pal2}/knowledge_graph.sqlite3")
kg.add_triple("GPT-4", "made by", "OpenAI", valid_from="2023-03-14")
kg.add_triple("Alice", "works_at", "Acme", valid_from="2024-01-01")
kg.supersede("Alice", "works_at", "Acme", "Globex", at="2025-06-01")
kg.add_triple("Bob", "plays", "chess", valid_from="2020-01-01")
kg.invalidate("Bob", "plays", "chess", ended="2025-01-31")
kg.add_triple("O'Brien", "knows", "Alice")
kg.close()
bad += compare("py->rust", f"{pal2}/knowledge_graph.sqlite3", pal2)
shutil.rmtree(W, ignore_errors=True)
print("differences:", bad)
sys.exit(1 if bad else 0)
