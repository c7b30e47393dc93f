#!/usr/bin/env python3
"""Regenerates the golden CHECK lines of scenario files.

For each FILE whose RUN line is `mlsc eval %s | FileCheck %s` (or another
mlsc command piped into FileCheck), runs that mlsc command and replaces the
file's `# CHECK...` lines with the current output: `# CHECK:` for the first
line, `# CHECK-NEXT:` for the rest (`# CHECK-EMPTY:` for blank lines). Review
the diff before committing.

usage: update-golden.py [--mlsc PATH] FILE...
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

RUN = re.compile(r"^#\s*RUN:\s*(mlsc\b.*?)\s*\|\s*FileCheck %s\s*$")
CHECK = re.compile(r"^#\s*CHECK(-NEXT|-EMPTY)?:")


def escape(line):
    # FileCheck treats {{ and [[ as regex and variable syntax.
    return line.replace("{{", "{{[{][{]}}").replace("[[", "{{[[][[]}}")


def update(path, mlsc):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    cmd = None
    for line in lines:
        m = RUN.match(line)
        if m:
            cmd = m.group(1)
            break
    if cmd is None:
        print(f"{path}: no `# RUN: mlsc ... | FileCheck %s` line; skipped")
        return False
    argv = [a if a != "%s" else path for a in shlex.split(cmd)]
    argv[0] = mlsc
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode not in (0, 3):
        sys.stderr.write(out.stderr)
        print(f"{path}: `{' '.join(argv)}` failed with {out.returncode}")
        return False
    kept = [l for l in lines if not CHECK.match(l)]
    while kept and kept[-1] == "":
        kept.pop()
    golden = []
    for i, line in enumerate(out.stdout.rstrip("\n").split("\n")):
        if i == 0:
            golden.append("# CHECK:      " + escape(line))
        elif line == "":
            golden.append("# CHECK-EMPTY:")
        else:
            golden.append("# CHECK-NEXT: " + escape(line))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(kept + [""] + golden) + "\n")
    print(f"{path}: {len(golden)} golden lines")
    return True


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--mlsc", default=os.path.join(here, "..", "build", "bin", "mlsc"))
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    ok = all([update(f, args.mlsc) for f in args.files])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
