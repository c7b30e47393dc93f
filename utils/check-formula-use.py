#!/usr/bin/env python3
"""Checks that the wall tables say truthfully which formulas are lowered.

A FORMULA row of runtime/walls/*.def must be applied by the graph of some
scenario of the test corpus (the examples and the evaluation tests); a
LIBRARY_FORMULA row must be applied by none, and gives the reason it is
kept. So a formula that lowering stops using, or starts using, cannot go
unnoticed, and `mlsc walls` (which derives a wall's status from the rows)
stays true.

usage: check-formula-use.py --mlsc PATH --root SRC
"""
import argparse
import os
import re
import subprocess
import sys

CORPUS = ["examples", "examples/golden", "test/lit/eval", "test/lit/query",
          "test/lit/anchors", "bench"]
APPLY = re.compile(r"^  %\d+ = ([a-z0-9_]+)\(.*\[wall \d+\]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    env = dict(os.environ, MLSC_DATA_DIR=args.root)
    rows = subprocess.run([args.mlsc, "--list-formulas"], check=True,
                          capture_output=True, text=True).stdout
    status = {}
    for line in rows.splitlines():
        cols = line.split("\t")
        status[cols[2]] = (cols[3], cols[4])
    used = set()
    files = 0
    for d in CORPUS:
        folder = os.path.join(args.root, d)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".mls"):
                continue
            proc = subprocess.run([args.mlsc, "--emit=graph",
                                   os.path.join(folder, name)],
                                  capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                continue  # a negative test: its diagnostics are checked
            files += 1
            for line in proc.stdout.splitlines():
                m = APPLY.match(line)
                if m:
                    used.add(m.group(1))
    bad = 0
    for name, (kind, table) in sorted(status.items()):
        if kind == "lowered" and name not in used:
            print(f"{table}: `{name}` is a FORMULA row, but no scenario of "
                  "the corpus applies it: lower it, or make it a "
                  "LIBRARY_FORMULA with the reason it is kept")
            bad += 1
        if kind == "library" and name in used:
            print(f"{table}: `{name}` is a LIBRARY_FORMULA row, but a "
                  "scenario applies it: make it a FORMULA row")
            bad += 1
    unknown = used - set(status)
    for name in sorted(unknown):
        print(f"a graph applies `{name}`, which no wall table lists")
        bad += 1
    if bad:
        return 1
    lowered = sum(1 for k, _ in status.values() if k == "lowered")
    print(f"{lowered} lowered formulas are applied by the {files} scenario "
          f"files, {len(status) - lowered} library formulas by none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
