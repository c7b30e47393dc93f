#!/usr/bin/env python3
"""Regenerates the generated sections of docs/ from `mlsc --list-*`.

A section is the text between `<!-- BEGIN GENERATED: NAME -->` and
`<!-- END GENERATED: NAME -->`. With --check, nothing is written and the exit
status is 1 when some section is stale (the lit test docs-fresh.test runs it).

usage: gen-docs.py --mlsc PATH/TO/mlsc [--check] [--root SRC]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from docgen import update_sections  # noqa: E402


def run(mlsc, what):
    out = subprocess.run([mlsc, "--list-" + what], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def units(mlsc):
    rows = ["| symbol | prefixes | value in base units | meaning |",
            "|---|---|---|---|"]
    for sym, prefixes, value, meaning in run(mlsc, "units"):
        rows.append(f"| `{sym}` | {prefixes} | {value} | {meaning} |")
    return "\n".join(rows)


def schemas(mlsc):
    out = []
    for cols in run(mlsc, "schemas"):
        if not cols[0].startswith("  "):
            out.append(f"\n### `{cols[0]}`\n\n{cols[1]}.\n")
            out.append("| field or metric | type | required | meaning |")
            out.append("|---|---|---|---|")
            continue
        item = cols[0].strip()
        if item.startswith("variants of"):
            out.insert(len(out) - 2, item.replace("variants of", "Variants of") + "\n")
        elif item.startswith("field "):
            out.append(f"| `{item[6:]}` | {cols[1]} | {cols[2]} | {cols[3]} |")
        elif item.startswith("metric "):
            out.append(f"| `{item[7:]}` (metric) | {cols[1]} | output | {cols[2]} |")
    return "\n".join(out).strip()


def passes(mlsc):
    rows = ["| pass (`--print-ir-after=`) | what it does |", "|---|---|"]
    for name, summary in run(mlsc, "passes"):
        rows.append(f"| `{name}` | {summary} |")
    return "\n".join(rows)


def md(text):
    """Table-cell text: pipes escaped."""
    return text.replace("|", "\\|")


def commands(mlsc):
    rows = ["| command | arguments | `--format` | what it does |", "|---|---|---|---|"]
    for cols in run(mlsc, "options"):
        if cols[0] == "command":
            _, name, args, formats, doc = cols
            fmts = ", ".join(formats.split(",")) if formats else "text"
            rows.append(f"| `{name}` | {md(args) or '—'} | {fmts} | {md(doc)} |")
    return "\n".join(rows)


def options(mlsc):
    rows = ["| option | commands | effect |", "|---|---|---|"]
    for cols in run(mlsc, "options"):
        if cols[0] == "option":
            _, head, cmds, doc = cols
            where = {"": "alone", "*": "every command that reads files"}.get(
                cmds, ", ".join(f"`{c}`" for c in cmds.split(",")))
            rows.append(f"| `{md(head)}` | {where} | {md(doc)} |")
    return "\n".join(rows)


def defaults(mlsc):
    rows = ["| kind | field | default | unit | plausible range | wall | role | evidence |",
            "|---|---|---|---|---|---|---|---|"]
    for kind, field, value, unit, rng, wall, role, evidence in run(mlsc, "defaults"):
        unit = "" if unit == "1" else unit
        rows.append(f"| `{kind}` | `{field}` | {value} | {unit} | {rng or '—'} | {wall} | "
                    f"{role} | {md(evidence)} |")
    return "\n".join(rows)


SECTIONS = {
    "docs/driver.md": {"commands": commands, "options": options},
    "docs/language.md": {"units": units, "schemas": schemas},
    "docs/passes.md": {"passes": passes},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    status = 0
    for rel, gens in SECTIONS.items():
        generators = {name: (lambda g=gen: g(args.mlsc)) for name, gen in gens.items()}
        status |= update_sections(os.path.join(args.root, rel), generators, args.check,
                                  "utils/gen-docs.py --mlsc build/bin/mlsc")
    return status

if __name__ == "__main__":
    sys.exit(main())
