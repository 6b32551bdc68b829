"""Information kept by AAAK: each drawer's AAAK summary (from `mempalace compress --json`,
saved as /tmp/aaak.json) is used as a search query; where does its own drawer rank?
Usage: mempalace --palace P compress --json > /tmp/aaak.json;
       python3 bench/aaak/information_kept.py BIN P"""
import json, subprocess, sys
BIN, PALACE = sys.argv[1], sys.argv[2]
report = json.load(open('/tmp/aaak.json'))
p = subprocess.Popen([BIN, '--palace', PALACE, 'mcp'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
n = 0
def rpc(method, params=None, notify=False):
    global n
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None: msg["params"] = params
    if not notify:
        n += 1; msg["id"] = n
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
    if notify: return None
    while True:
        r = json.loads(p.stdout.readline())
        if r.get("id") == n: return r
rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "k", "version": "0"}})
rpc("notifications/initialized", notify=True)
ranks = {"aaak": [], "body": []}
for d in report["drawers"]:
    lines = d["aaak"].split("\n")
    body = lines[-1]  # the zettel line, without the wing|room|date|file header
    for label, q in (("aaak", d["aaak"]), ("body", body)):
        r = rpc("tools/call", {"name": "mempalace_search", "arguments": {"query": q[:250], "limit": 10}})
        hits = json.loads(r["result"]["content"][0]["text"])["results"]
        ids = [h["drawer_id"] for h in hits]
        ranks[label].append(ids.index(d["drawer_id"]) + 1 if d["drawer_id"] in ids else 99)
for label, rs in ranks.items():
    k = len(rs)
    print(label, k, "R@1 %.3f R@5 %.3f R@10 %.3f" % (sum(r <= 1 for r in rs)/k, sum(r <= 5 for r in rs)/k, sum(r <= 10 for r in rs)/k))
