#!/usr/bin/env python3
"""Compiles every example in docs/*.md and every file in examples/.

In Markdown, a fenced block tagged `mls` must compile with exit 0; a block
tagged `mls verify` is run with --verify-diagnostics (its expected-error
comments must match). Each examples/**/*.mls must compile with exit 0.

usage: check-doc-examples.py --mlsc PATH [--root SRC]
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

from doc_blocks import FENCE, blocks


def compile_file(mlsc, path, verify):
    cmd = [mlsc] + (["--verify-diagnostics"] if verify else []) + [path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    failures, count = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for doc in sorted(glob.glob(os.path.join(args.root, "docs", "*.md"))):
            for line, tag, text in blocks(doc):
                count += 1
                name = os.path.join(tmp, "%s_%d.mls" % (os.path.basename(doc)[:-3], line))
                with open(name, "w", encoding="utf-8") as f:
                    f.write(text)
                rc, err = compile_file(args.mlsc, name, tag == "mls verify")
                if rc != 0:
                    failures.append("%s:%d: example does not %s:\n%s" % (
                        os.path.relpath(doc, args.root), line,
                        "verify" if tag == "mls verify" else "compile", err))
    for ex in sorted(glob.glob(os.path.join(args.root, "examples", "**", "*.mls"),
                            recursive=True)):
        count += 1
        rc, err = compile_file(args.mlsc, ex, False)
        if rc != 0:
            failures.append("%s: example does not compile:\n%s" % (
                os.path.relpath(ex, args.root), err))
    for f in failures:
        print(f)
    print("%d examples checked, %d failed" % (count, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
