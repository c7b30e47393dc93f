#!/usr/bin/env python3
"""Checks every #include of the tree against the allowed arrows between parts.

The parts are folders: grammar/ (and the parser ANTLR generates from it),
frontend/, ir/, passes/, runtime/ and tools/ (the driver). The arrows that
are allowed are written in docs/architecture.md, in the block that follows
the line `allowed includes:`; this script reads them from there, so the
document and the check cannot disagree. test/, bench/ and fuzz/ may use
every part.

usage: check-layers.py SOURCE_DIR [--assume FILE:HEADER ...]

--assume adds an include that is not in the tree (FILE includes HEADER),
so a test can show that the check refuses a forbidden arrow.
"""
import argparse
import os
import re
import sys

PARTS = {"grammar": "grammar", "frontend": "frontend", "ir": "ir",
         "passes": "passes", "runtime": "runtime", "tools": "driver"}
# Headers generated from grammar/Mls.g4, and the ANTLR runtime they need.
GRAMMAR_HEADERS = re.compile(r"^(Mls\w*\.h|antlr4-runtime\.h|antlr4/.*)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def allowed_arrows(doc):
    """{part: set of parts it may include}, from docs/architecture.md."""
    with open(doc, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = next(i for i, l in enumerate(lines)
                     if l.strip() == "allowed includes:")
    except StopIteration:
        sys.exit(f"error: {doc} has no `allowed includes:` block")
    arrows = {}
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("```"):
            if arrows:
                break
            continue
        m = re.match(r"^\s*(\w+)\s*->\s*(.*)$", line)
        if not m:
            sys.exit(f"error: {doc}: cannot read the arrow `{line}`")
        targets = {t.strip() for t in m.group(2).split(",") if t.strip()}
        if targets == {"nothing"}:
            targets = set()
        arrows[m.group(1)] = targets
    return arrows


def part_of_file(rel):
    top = rel.split("/", 1)[0]
    return PARTS.get(top)


def part_of_header(header):
    if GRAMMAR_HEADERS.match(header):
        return "grammar"
    top = header.split("/", 1)[0]
    return PARTS.get(top)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--assume", action="append", default=[],
                    metavar="FILE:HEADER")
    args = ap.parse_args()
    arrows = allowed_arrows(os.path.join(args.root, "docs", "architecture.md"))
    includes = []  # (file, line, header)
    for top in PARTS:
        for dirpath, _, files in os.walk(os.path.join(args.root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".def", ".inc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, args.root)
                with open(path, encoding="utf-8") as f:
                    for n, text in enumerate(f, 1):
                        m = INCLUDE.match(text)
                        if m:
                            includes.append((rel, n, m.group(1)))
    for a in args.assume:
        rel, header = a.split(":", 1)
        includes.append((rel, 0, header))
    bad = 0
    for rel, n, header in sorted(includes):
        src = part_of_file(rel)
        dst = part_of_header(header)
        if src is None or dst is None or src == dst:
            continue
        if dst not in arrows.get(src, set()):
            where = f"{rel}:{n}" if n else f"{rel} (assumed)"
            allowed = ", ".join(sorted(arrows.get(src, set()))) or "nothing"
            print(f"{where}: {src} may not include {header} ({dst}); "
                  f"{src} may include {allowed} (docs/architecture.md)")
            bad += 1
    if bad:
        return 1
    print(f"{len(includes)} includes follow the allowed arrows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
