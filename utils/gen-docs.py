#!/usr/bin/env python3
"""Regenerates the generated sections of docs/ from `mlsc --list-*`.

A section is the text between `<!-- BEGIN GENERATED: NAME -->` and
`<!-- END GENERATED: NAME -->`. With --check, nothing is written and the exit
status is 1 when some section is stale (the lit test docs-fresh.test runs it).

usage: gen-docs.py --mlsc PATH/TO/mlsc [--check] [--root SRC]
"""
import argparse
import os
import re
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
    """Every kind's fields. A scenario's metrics are the graph contract's
    public metrics: one row points to their table in docs/walls.md, so a
    new wall's metrics are documented in one place."""
    out = []
    for cols in run(mlsc, "schemas"):
        if not cols[0].startswith("  "):
            pointed = False
            out.append(f"\n### `{cols[0]}`\n\n{cols[1]}.\n")
            out.append("| field or metric | type | required | meaning |")
            out.append("|---|---|---|---|")
            continue
        item = cols[0].strip()
        if item.startswith("variants of"):
            out.insert(len(out) - 2, item.replace("variants of", "Variants of") + "\n")
        elif item.startswith("field "):
            out.append(f"| `{item[6:]}` | {cols[1]} | {cols[2]} | {cols[3]} |")
        elif item.startswith("metric ") and not pointed:
            pointed = True
            out.append("| its metrics | see the table | output | the public metrics of the "
                       "graph contract (`ir/Metrics.def`), with their units, walls and "
                       "scorecard levels: [docs/walls.md, Metrics](walls.md#metrics); "
                       "conditions and asserts may also name its internal metrics and "
                       "its phases' (`s.decode.comm_time`, `s.kv_bytes_per_sequence`: "
                       "what `mlsc explain` shows of them; the other labels in an "
                       "`explain` tree, such as `itl.stalled_p99`, are intermediate "
                       "values, which `explain` takes but `-e`, `assert` and `sla` do "
                       "not) |")
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


def formulas(mlsc, wall):
    """The formula table of one wall (its .def file's rows)."""
    rows = ["| formula | equation | source |", "|---|---|---|"]
    for num, _, name, status, _, _, eq, cite, reason in run(mlsc, "formulas"):
        if int(num) == wall:
            lib = f" (library: {md(reason)})" if status == "library" else ""
            rows.append(f"| `{name}`{lib} | `{md(eq)}` | {md(cite)} |")
    return "\n".join(rows)


def metrics(mlsc):
    rows = ["| metric | unit | wall | level | applies to | meaning |",
            "|---|---|---|---|---|---|"]
    for name, unit, wall, vis, applies, level, doc in run(mlsc, "metrics"):
        if vis == "public":
            unit = "true or false" if unit == "bool" else unit
            rows.append(f"| `{name}` | {unit} | {wall} | {level or '—'} | {applies} | {md(doc)} |")
    return "\n".join(rows)


def defaults_of(mlsc, wall=None):
    rows = ["| field | default | plausible range | role | evidence |",
            "|---|---|---|---|---|"]
    for kind, field, value, unit, rng, num, role, evidence in run(mlsc, "defaults"):
        if wall is None or int(num) == wall:
            unit = "" if unit == "1" else " " + unit
            shown = value + unit if value != "none" else "none"
            rng = rng + unit if rng else "—"
            where = f"`{kind}.{field}`" + ("" if wall is not None else f" (wall {num})")
            rows.append(f"| {where} | {shown} | {rng} | {role} | {md(evidence)} |")
    return "\n".join(rows)


def walls_sections(mlsc, path):
    """docs/walls.md: `metrics`, `defaults`, and a `formulas-N` (and
    optionally `defaults-N`) section per wall. A wall with formulas and no
    `formulas-N` section is an error, so a new wall cannot go undocumented."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    gens = {"metrics": lambda: metrics(mlsc), "defaults": lambda: defaults_of(mlsc)}
    for kind, num in re.findall(r"<!-- BEGIN GENERATED: (formulas|defaults)-(\d+) -->", text):
        n = int(num)
        gens[f"{kind}-{n}"] = (lambda n=n: formulas(mlsc, n)) if kind == "formulas" \
            else (lambda n=n: defaults_of(mlsc, n))
    walls = sorted({int(r[0]) for r in run(mlsc, "formulas")})
    missing = [w for w in walls if f"formulas-{w}" not in gens]
    if missing:
        print("error: %s: no `formulas-N` section for wall(s) %s; add "
              "<!-- BEGIN GENERATED: formulas-N --> and <!-- END GENERATED: formulas-N -->"
              % (path, ", ".join(map(str, missing))))
        return None
    return gens


SECTIONS = {
    "docs/driver.md": {"commands": commands, "options": options},
    "docs/language.md": {"units": units, "schemas": schemas},
    "docs/passes.md": {"passes": passes},
}


def validation(mlsc, root):
    """`mlsc validate` over validation/: the table and its summary."""
    out = subprocess.run([mlsc, "validate", os.path.join(root, "validation")],
                         check=False, capture_output=True, text=True).stdout
    return "```\n" + out.rstrip("\n") + "\n```"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = ap.parse_args()
    status = 0
    regenerate = "utils/gen-docs.py --mlsc build/bin/mlsc"
    for rel, gens in SECTIONS.items():
        generators = {name: (lambda g=gen: g(args.mlsc)) for name, gen in gens.items()}
        status |= update_sections(os.path.join(args.root, rel), generators, args.check,
                                  regenerate)
    status |= update_sections(
        os.path.join(args.root, "docs/validation.md"),
        {"validation": lambda: validation(args.mlsc, args.root)}, args.check,
        regenerate)
    walls = os.path.join(args.root, "docs/walls.md")
    gens = walls_sections(args.mlsc, walls)
    if gens is None:
        return 1
    status |= update_sections(walls, gens, args.check, regenerate)
    return status

if __name__ == "__main__":
    sys.exit(main())
