#!/usr/bin/env python3
"""Regenerates the generated sections of docs/diagnostics.md.

Each section is the text between `<!-- BEGIN GENERATED: NAME -->` and
`<!-- END GENERATED: NAME -->`:
  diagnostics           the table of every kind, from frontend/Diagnostics.def
                        (kind, severity, summary, the group heading above it)
  diagnostics-rendered  real mlsc output for the inputs in EXAMPLES (needs
                        --mlsc; left as it is without)
With --check nothing is written and the exit status is 1 when a section is
stale (test/lit/diagnostics-doc-fresh.test runs it). With --mlsc, the kinds
read from the .def must also be exactly those `mlsc --list-diagnostics`
prints, so this reader and the compiler cannot disagree.

usage: gen-diagnostics-doc.py [--check] [--root SRC] [--mlsc PATH]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diagnostics_def import read_kinds  # noqa: E402
from docgen import update_sections  # noqa: E402

DOC = os.path.join("docs", "diagnostics.md")
# Run from test/lit/diagnostics so the printed paths are short.
EXAMPLES_DIR = os.path.join("test", "lit", "diagnostics")
EXAMPLES = ["Inputs/render_example.mls", "Inputs/uses_pod.mls"]


def table(kinds):
    rows = ["| kind | severity | group | reported for |", "|---|---|---|---|"]
    for k in kinds:
        summary = k.summary.replace("|", "\\|")
        group = "`%s`" % k.group if k.group.startswith("--") else k.group
        rows.append("| `%s` | %s | %s | %s |" % (
            k.name, k.severity.lower(), group, summary))
    return "\n".join(rows) + "\n"


def rendered(mlsc, root):
    out = ["```"]
    for example in EXAMPLES:
        r = subprocess.run([os.path.abspath(mlsc) if os.sep in mlsc else mlsc,
                            "--data-dir=" + os.path.abspath(root), example],
                           cwd=os.path.join(root, EXAMPLES_DIR),
                           capture_output=True, text=True)
        out.append("$ mlsc " + example)
        out.append(r.stderr.rstrip("\n"))
    out.append("```")
    return "\n".join(out) + "\n"


def cross_check(kinds, mlsc):
    out = subprocess.run([mlsc, "--list-diagnostics"], check=True,
                         capture_output=True, text=True).stdout
    listed = [tuple(line.split("\t")) for line in out.splitlines()]
    read = [(k.name, k.severity.lower(), k.summary) for k in kinds]
    if listed != read:
        only_listed = sorted(set(listed) - set(read))
        only_read = sorted(set(read) - set(listed))
        return ("`mlsc --list-diagnostics` and %s disagree:\n"
                "  only in mlsc: %s\n  only in the .def as read: %s" % (
                    os.path.join("frontend", "Diagnostics.def"),
                    only_listed or "(order differs)", only_read or "-"))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--mlsc", help="also compare with `mlsc --list-diagnostics`")
    args = ap.parse_args()
    kinds = read_kinds(args.root)
    if args.mlsc:
        problem = cross_check(kinds, args.mlsc)
        if problem:
            print("error: " + problem)
            return 1
    generated = {"diagnostics": lambda: table(kinds)}
    if args.mlsc:
        generated["diagnostics-rendered"] = lambda: rendered(args.mlsc, args.root)
    return update_sections(os.path.join(args.root, DOC), generated, args.check,
                           "utils/gen-diagnostics-doc.py --mlsc build/bin/mlsc")

if __name__ == "__main__":
    sys.exit(main())
