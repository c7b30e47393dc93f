#!/usr/bin/env python3
"""Checks `mlsc fmt` over every .mls file of the repository.

For each file in examples/, registries/, stdlib/, fuzz/corpus/ and
fuzz/regressions/, and each ```mls block of docs/*.md:
  * formatting is idempotent: fmt of fmt's output is that output;
  * formatting preserves meaning: the formatted text compiles to the same
    IR (source locations aside), or, for a file with semantic errors, to
    the same diagnostics (kinds and messages);
  * the project's own files are formatted already (fmt changes nothing),
    except fuzz inputs, which keep the shapes the fuzzer found.
A file that does not parse must be refused by fmt (exit 1, no output).

usage: check-fmt.py --mlsc PATH [--root SRC] [--fix-docs] [FILE...]

--fix-docs rewrites the ```mls blocks of docs/*.md in their formatted
layout (what `mlsc fmt` does for .mls files).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

from doc_blocks import FENCE, blocks as doc_blocks

# `@file.mls:12:3`, `@12:3` and `file.mls:12:3:` locations.
LOCATION = re.compile(r"@?[^\s@:]*:\d+:\d+:?|@\d+:\d+")


def run(args, stdin=None):
    return subprocess.run(args, input=stdin, capture_output=True, text=True)


def meaning(mlsc, path, include):
    """The IR of `path` without locations, or its error messages."""
    r = run([mlsc, "compile", "-I", include, path])
    if r.returncode == 0:
        text = r.stdout
    else:
        text = "\n".join(l for l in r.stderr.splitlines()
                         if re.search(r": (error|warning): ", l))
    text = LOCATION.sub("@", text)
    return re.sub(r'module "[^"]*"', "module", text)


def check(mlsc, name, text, include, must_be_formatted, tmp, failures):
    r = run([mlsc, "fmt", "-"], text)
    if r.returncode != 0:
        c = run([mlsc, "compile", "-I", include, "-"], text)
        if c.returncode == 0 or r.stdout:
            failures.append(f"{name}: fmt refused a file that compiles, or "
                            f"printed output with its refusal:\n{r.stderr}")
        return "refused"
    out = r.stdout
    again = run([mlsc, "fmt", "-"], out)
    if again.returncode != 0 or again.stdout != out:
        failures.append(f"{name}: fmt is not idempotent:\n" + diff(out, again.stdout))
    before = os.path.join(tmp, "before.mls")
    after = os.path.join(tmp, "after.mls")
    with open(before, "w", encoding="utf-8") as f:
        f.write(text)
    with open(after, "w", encoding="utf-8") as f:
        f.write(out)
    a, b = meaning(mlsc, before, include), meaning(mlsc, after, include)
    if a != b:
        failures.append(f"{name}: the formatted file means something else:\n"
                        + diff(a, b))
    if must_be_formatted and out != text:
        failures.append(f"{name}: not formatted; run `mlsc fmt` on it:\n"
                        + diff(text, out))
    return "formatted" if out == text else "changed"


def diff(a, b):
    import difflib
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                        "before", "after", n=1))[:3000]


def fix_docs(mlsc, root):
    for doc in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        with open(doc, encoding="utf-8") as f:
            lines = f.read().split("\n")
        out, i = [], 0
        while i < len(lines):
            out.append(lines[i])
            m = FENCE.match(lines[i])
            i += 1
            if not m:
                continue
            j = i
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            block = "\n".join(lines[i:j]) + "\n"
            r = run([mlsc, "fmt", "-"], block)
            if m.group(1) == "mls" and r.returncode == 0:
                out += r.stdout[:-1].split("\n")
            else:
                out += lines[i:j]
            i = j
        with open(doc, "w", encoding="utf-8") as f:
            f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--fix-docs", action="store_true")
    ap.add_argument("files", nargs="*",
                    help="check these files (as the project's own) instead")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if args.fix_docs:
        fix_docs(args.mlsc, root)
    failures, counts = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        files = [(os.path.abspath(p), True) for p in args.files]
        for d in () if args.files else ("examples", "registries", "stdlib"):
            files += [(p, True) for p in
                      glob.glob(os.path.join(root, d, "**", "*.mls"), recursive=True)]
        for d in () if args.files else ("fuzz/corpus", "fuzz/regressions"):
            files += [(p, False) for p in
                      glob.glob(os.path.join(root, d, "**", "*.mls"), recursive=True)]
        for path, own in sorted(files):
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                try:
                    text = f.read()
                except UnicodeDecodeError:
                    continue
            name = os.path.relpath(path, root)
            what = check(args.mlsc, name, text, os.path.dirname(path), own,
                         tmp, failures)
            counts[what] = counts.get(what, 0) + 1
        docs = [] if args.files else glob.glob(os.path.join(root, "docs", "*.md"))
        for doc in sorted(docs):
            for line, tag, text in doc_blocks(doc):
                name = f"{os.path.relpath(doc, root)}:{line}"
                what = check(args.mlsc, name, text, root, tag == "mls", tmp,
                             failures)
                counts[what] = counts.get(what, 0) + 1
    for f in failures:
        print(f, file=sys.stderr)
    print("fmt: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
