#!/usr/bin/env python3
"""Updates the golden CHECK lines of this repository's own tests.

The work is tools/mlsc-update-golden's (installed as `mlsc-update-golden`,
docs/golden-tests.md); this entry only runs it with the tree's own driver,
build/bin/mlsc, unless --mlsc says otherwise, and with the substitutions
test/lit.cfg.py defines that a golden RUN line uses (%src, %obj, %utils,
%python, %validate-json), unless a --subst gives another. Same options:

usage: update-golden.py [--all] [--dry-run] [--mlsc PATH] [--subst NAME=VALUE]... PATH...
"""
import os
import shlex
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOOL = os.path.join(ROOT, "tools", "mlsc-update-golden")
BUILD = os.path.join(ROOT, "build")
BUILT = os.path.join(BUILD, "bin", "mlsc")

# test/lit.cfg.py's, as they stand when lit runs from build/.
TREE = {
    "src": ROOT,
    "obj": BUILD,
    "utils": os.path.join(ROOT, "utils"),
    "python": sys.executable,
    "validate-json": " ".join(shlex.quote(w) for w in
                              [sys.executable, os.path.join(ROOT, "utils", "validate-json.py")]),
}

args = sys.argv[1:]
if not any(a == "--mlsc" or a.startswith("--mlsc=") for a in args) and os.path.exists(BUILT):
    args = ["--mlsc", BUILT] + args
# First, so that a --subst of the caller's, read later, replaces one.
args = [f"--subst={name}={value}" for name, value in TREE.items()] + args
os.execv(sys.executable, [sys.executable, TOOL] + args)
