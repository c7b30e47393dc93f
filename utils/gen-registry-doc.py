#!/usr/bin/env python3
"""Regenerates the table of bundled registry entries in docs/registries.md.

Reads `mlsc audit --format=json` over registries/ and writes, between
`<!-- BEGIN GENERATED: registry -->` and `<!-- END GENERATED: registry -->`,
one table per entity kind with the fields users look up most. With --check,
exits 1 when the committed table is stale (test/lit/registries-doc-fresh.test).

usage: gen-registry-doc.py --mlsc PATH [--root SRC] [--check]
"""
import argparse
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docgen import update_sections  # noqa: E402

COLUMNS = {
    "accelerator": ["peak.bf16", "peak.fp8", "hbm.capacity", "hbm.bandwidth", "tdp"],
    "fabric": ["bandwidth", "latency"],
    "node": ["count", "overhead"],
    "cluster": ["nodes", "oversubscription"],
    "site": ["carbon_intensity", "pue", "wue", "electricity_price"],
    "model": ["params", "active_params", "layers", "hidden", "heads", "kv_heads", "context"],
    "precision": ["bytes"],
}
ORDER = ["accelerator", "fabric", "node", "cluster", "site", "model", "precision"]


def table(records):
    by_kind = collections.OrderedDict()
    sources = collections.defaultdict(set)
    files = {}
    for r in records:
        kind = r["entity_kind"]
        ent = by_kind.setdefault(kind, collections.OrderedDict()).setdefault(r["entity"], {})
        ent[r["field"]] = r["display"]
        files[r["entity"]] = r["file"]
        if r["source"]:
            sources[r["entity"]].add(r["source"]["kind"])
    out = []
    total = sum(len(v) for v in by_kind.values())
    out.append(f"{total} entities, {len(records)} numeric values.")
    for kind in ORDER + [k for k in by_kind if k not in ORDER]:
        if kind not in by_kind:
            continue
        cols = COLUMNS.get(kind, [])
        ents = by_kind[kind]
        out.append(f"\n### {kind} ({len(ents)})\n")
        out.append("| name | " + " | ".join(f"`{c}`" for c in cols) + " | source kinds | file |")
        out.append("|---" * (len(cols) + 3) + "|")
        for name, fields in ents.items():
            cells = [fields.get(c, "") for c in cols]
            kinds = ", ".join(sorted(sources[name]))
            out.append(f"| `{name}` | " + " | ".join(cells) + f" | {kinds} | {files[name]} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    env = dict(os.environ, MLSC_DATA_DIR=root)
    run = subprocess.run([args.mlsc, "audit", "--format=json", "--as-of=2026-01-01",
                          "--data-dir=" + root], capture_output=True, text=True, env=env)
    if run.returncode not in (0, 3):
        sys.stderr.write(run.stderr)
        return 2
    text = table(json.loads(run.stdout)["records"])
    return update_sections(os.path.join(root, "docs", "registries.md"),
                           {"registry": lambda: text}, args.check,
                           "utils/gen-registry-doc.py --mlsc build/bin/mlsc")

if __name__ == "__main__":
    sys.exit(main())
