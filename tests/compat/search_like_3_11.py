"""Searches on a palace made by MemPalace 3.11, side by side: 3.11's own `search_memories` and
the `mempalace` binary with 3.11's ranking (`MEMPALACE_RANKING=mempalace-3.11`) on the same
palace migrated, for a list of queries. Prints every query whose top N differs (drawer ids,
distances, BM25 scores, closet boosts) and a summary; exit status 1 on any difference.

Run with the Python of a venv holding mempalace==3.11.0 and the ONNX export of MiniLM its
ChromaDB embedder loads (see bench/mcp/README.md):

    HOME=/tmp/mp311/home /tmp/mp311/bin/python tests/compat/search_like_3_11.py \\
        PALACE_311 [--bin MEMPALACE_BIN] [--queries FILE] [--limit 5]

PALACE_311 is copied first (3.11's reads may write); FILE holds one query per line (default:
the coding questions below, for a palace mined from source code such as bench/mcp's corpus).
MEMPALACE_BIN defaults to the debug build in ~/.cache/mempalace/target; the binary finds the
model through MEMPALACE_MODEL_DIR as usual.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

from mempalace.searcher import search_memories

CODE_QUERIES = [
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
    "json", "logging handler", "socket timeout", "email header", "thread pool executor",
    "sqlite cursor", "http cookie", "base64", "url quoting", "xml rpc server",
    "asyncio event loop", "csv writer", "temporary directory", "unicode normalization",
    "regular expression groups", "pickle protocol", "zip archive", "hashlib sha256",
    "argparse subcommands", "datetime timezone",
]


def theirs(palace, query, limit):
    hits = search_memories(query, palace, n_results=limit)["results"]
    return [(h["drawer_id"], round(h["distance"], 3), round(h.get("bm25_score") or 0.0, 3),
             round(h.get("closet_boost", 0.0), 3)) for h in hits]


def ours(binary, palace, query, limit):
    env = dict(os.environ, MEMPALACE_RANKING="mempalace-3.11")
    env.pop("MEMPALACE_HYBRID_VECTOR_WEIGHT", None)
    env.pop("MEMPALACE_HYBRID_BM25_WEIGHT", None)
    out = subprocess.run([binary, "--palace", palace, "search", query, "--limit", str(limit),
                          "--json"], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"search {query!r}: {out.stderr}")
    hits = json.loads(out.stdout)["results"]
    return [(h["drawer_id"], round(h["distance"], 3), round(h["bm25_score"], 3),
             round(h.get("closet_boost", 0.0), 3)) for h in hits]


def same(a, b):
    """Same ids in the same order, scores equal to within rounding."""
    return len(a) == len(b) and all(
        x[0] == y[0] and all(abs(p - q) <= 2e-3 for p, q in zip(x[1:], y[1:]))
        for x, y in zip(a, b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("palace_311")
    ap.add_argument("--bin", default=os.path.expanduser(
        "~/.cache/mempalace/target/debug/mempalace"))
    ap.add_argument("--queries")
    ap.add_argument("--limit", type=int, default=5)
    args = ap.parse_args()
    queries = CODE_QUERIES
    if args.queries:
        queries = [q.strip() for q in open(args.queries) if q.strip()]
    work = tempfile.mkdtemp(prefix="search_compat_")
    try:
        p311 = os.path.join(work, "p311")
        shutil.copytree(args.palace_311, p311)
        migrated = os.path.join(work, "ours")
        out = subprocess.run([args.bin, "--palace", migrated, "migrate", p311, "--quiet"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"migrate: {out.stderr}")
        exact = best = lifted = 0
        for q in queries:
            t, o = theirs(p311, q, args.limit), ours(args.bin, migrated, q, args.limit)
            lifted += any(h[3] for h in t)
            best += t[:1] == o[:1] or (t[:1] and o[:1] and t[0][0] == o[0][0])
            if same(t, o):
                exact += 1
                continue
            print(f"differs: {q!r}")
            for x, y in zip(t + [None] * len(o), o + [None] * len(t)):
                if x is None and y is None:
                    break
                print(f"   3.11 {x}\n   ours {y}")
        print(f"{exact}/{len(queries)} queries with 3.11's exact top {args.limit} "
              f"({lifted} of them lifted by closets in 3.11), best hit equal for {best}")
        sys.exit(0 if exact == len(queries) else 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
