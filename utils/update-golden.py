#!/usr/bin/env python3
"""Updates the golden CHECK lines of this repository's own tests.

The work is tools/mlsc-update-golden's (installed as `mlsc-update-golden`,
docs/golden-tests.md); this entry only runs it with the tree's own driver,
build/bin/mlsc, unless --mlsc says otherwise. Same options:

usage: update-golden.py [--all] [--dry-run] [--mlsc PATH] PATH...
"""
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TOOL = os.path.join(ROOT, "tools", "mlsc-update-golden")
BUILT = os.path.join(ROOT, "build", "bin", "mlsc")

args = sys.argv[1:]
if not any(a == "--mlsc" or a.startswith("--mlsc=") for a in args) and os.path.exists(BUILT):
    args = ["--mlsc", BUILT] + args
os.execv(sys.executable, [sys.executable, TOOL] + args)
