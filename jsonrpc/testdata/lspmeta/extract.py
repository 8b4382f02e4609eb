#!/usr/bin/env python3
"""Extracts from the LSP 3.17 meta-model (metaModel.json, as published with
the specification: microsoft/lsprotocol generator/lsp.json, MIT) the
messages loom-lsp sends a client and every type they reach, without the
documentation, into metamodel.json, which TestStandardMembers reads.

    python3 extract.py path/to/lsp.json > metamodel.json
"""
import json
import sys

SENT = [
    "window/showMessage", "window/showMessageRequest", "window/logMessage",
    "workspace/applyEdit", "workspace/configuration",
    "window/workDoneProgress/create", "$/progress", "$/cancelRequest",
]
EXTRA = ["WorkDoneProgressBegin", "WorkDoneProgressReport", "WorkDoneProgressEnd"]

m = json.load(open(sys.argv[1]))
structs = {s["name"]: s for s in m["structures"]}
aliases = {a["name"]: a for a in m["typeAliases"]}
enums = {e["name"]: e for e in m["enumerations"]}
keep_s, keep_a, keep_e = {}, {}, {}


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("documentation", "since", "proposed", "deprecated", "sinceTags")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def reach(t):
    if t is None:
        return
    k = t["kind"]
    if k == "reference":
        n = t["name"]
        if n in structs and n not in keep_s:
            keep_s[n] = strip(structs[n])
            for p in structs[n].get("properties", []):
                reach(p["type"])
            for e in structs[n].get("extends", []) + structs[n].get("mixins", []):
                reach(e)
        elif n in aliases and n not in keep_a:
            keep_a[n] = strip(aliases[n])
            reach(aliases[n]["type"])
        elif n in enums and n not in keep_e:
            keep_e[n] = {"name": n, "type": enums[n]["type"]}
    elif k == "array":
        reach(t["element"])
    elif k == "map":
        reach(t["value"])
    elif k in ("or", "and", "tuple"):
        for i in t["items"]:
            reach(i)
    elif k == "literal":
        for p in t["value"]["properties"]:
            reach(p["type"])


out = {"metaData": m["metaData"], "requests": [], "notifications": []}
for kind in ("requests", "notifications"):
    for r in m[kind]:
        if r["method"] in SENT and r["messageDirection"] in ("serverToClient", "both"):
            out[kind].append(strip({k: r[k] for k in ("method", "params", "result", "messageDirection") if k in r}))
            reach(r.get("params"))
            reach(r.get("result"))
for n in EXTRA:
    reach({"kind": "reference", "name": n})
out["structures"] = sorted(keep_s.values(), key=lambda s: s["name"])
out["typeAliases"] = sorted(keep_a.values(), key=lambda s: s["name"])
out["enumerations"] = sorted(keep_e.values(), key=lambda s: s["name"])
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
