#!/usr/bin/env python3
"""Fails when a lit RUN line prints JSON that no schema checks.

Every RUN line under test/lit that makes mlsc print JSON (`--format=json`,
`--format json`, or an `--output` file ending in .json) must pass it
through `%validate-json KIND` (a file: `%validate-json KIND < FILE` on a
RUN line of the same test), except where mlsc is expected to exit 1 or
2 (`%expect-exit 1 mlsc`, `%expect-exit 2 mlsc`): an input or usage error
prints no JSON. Also checked: every command that prints JSON
(tools/mlsc/Options.def) has a schema in docs/schema/, every schema is used
by some RUN line, the `$defs` that several schemas copy (a quantity, the
format version) are the same in each, and the enums that list a table of
the compiler (phases, binding walls, walls, source kinds) list it whole.

usage: check-json-validated.py [--root SRC] [--tests DIR]
"""
import argparse
import glob
import json
import os
import re
import sys

PRINTS_JSON = re.compile(r"--format[= ]json\b|--output[= ]\S*\.json\b")
WRITES_JSON = re.compile(r"--output[= ](\S*\.json)\b")
NO_OUTPUT = re.compile(r"%expect-exit [12] mlsc ")
VALIDATE = re.compile(r"%validate-json (?!-)([\w-]+)")
VALIDATES_FILE = re.compile(r"%validate-json [\w-]+ < (\S+)")
COMMAND = re.compile(r'^COMMAND\(\w+, "([\w-]+)", "[^"]*", "([^"]*)"', re.M)

# Schema enums that list a table of the compiler: (schema, path to the
# enum, the table's name in def_tables).
TABLE_ENUMS = [
    ("eval", "$defs/binding_wall/properties/phase/enum", "phases"),
    ("solve", "$defs/solve_binding_wall/properties/phase/enum", "phases"),
    ("eval", "$defs/binding_wall", "binding walls"),
    ("eval", "$defs/binding_wall/properties/wall/enum", "binding wall names"),
    ("eval", "$defs/binding_wall/properties/number/enum", "binding wall numbers"),
    ("solve", "$defs/solve_binding_wall", "binding walls"),
    ("solve", "$defs/solve_binding_wall/properties/wall/enum", "binding wall names"),
    ("solve", "$defs/solve_binding_wall/properties/number/enum", "binding wall numbers"),
    ("sensitivity", "$defs/wall/enum", "binding wall names"),
    ("walls", "properties/walls/items/properties/name/enum", "walls"),
    ("walls", "properties/walls/items/properties/domain/enum", "domains"),
    ("explain", "$defs/source_kind/enum", "source kinds"),
    ("explain-leaves", "$defs/source_kind/enum", "source kinds"),
    ("audit", "properties/records/items/properties/source/oneOf/0/properties/kind/enum",
     "source kinds"),
]


def def_tables(root):
    """The tables of ir/*.def that schema enums list."""
    def read(name):
        with open(os.path.join(root, "ir", name), encoding="utf-8") as f:
            return f.read()
    metrics, walls, kinds = read("Metrics.def"), read("Walls.def"), read("Schema.def")
    rows = re.findall(r'^WALL\((\d+), (\w+), "([^"]+)", "([^"]+)"', walls, re.M)
    binds = set(re.findall(r'^PHASE_METRIC\(\w+, "[^"]*", "[^"]*", (\w+), true',
                           metrics, re.M))
    return {
        "phases": re.findall(r'^PHASE\(\w+, "([^"]+)"', metrics, re.M),
        "binding walls": [(name, int(n)) for n, wall, name, _ in rows if wall in binds],
        "binding wall names": [name for _, wall, name, _ in rows if wall in binds],
        "binding wall numbers": [int(n) for n, wall, _, _ in rows if wall in binds],
        "walls": [name for _, _, name, _ in rows],
        "domains": list(dict.fromkeys(domain for _, _, _, domain in rows)),
        "source kinds": re.search(r'FIELD\(\s*source, "kind", Enum,\s*"([^"]+)"',
                                  kinds).group(1).split("|"),
    }


def schema_list(definition):
    """An enum's values; for a binding wall, its (wall, number) pairs."""
    if isinstance(definition, list):
        return definition
    return [(rule["if"]["properties"]["wall"]["const"],
             rule["then"]["properties"]["number"]["const"])
            for rule in definition["allOf"]]


def run_lines(path):
    """(line number, RUN command) pairs, continuation lines joined."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, pending, start = [], "", 0
    for number, line in enumerate(lines, 1):
        m = re.search(r"RUN:(.*)$", line)
        if not m:
            continue
        text = m.group(1).rstrip()
        if not pending:
            start = number
        if text.endswith("\\"):
            pending += text[:-1].strip() + " "
            continue
        out.append((start, pending + text.strip()))
        pending = ""
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--tests", help="the lit folder (default: ROOT/test/lit)")
    args = ap.parse_args()
    tests = args.tests or os.path.join(args.root, "test", "lit")
    schema_dir = os.path.join(args.root, "docs", "schema")
    schemas = {os.path.basename(p)[:-len(".schema.json")]: p
               for p in glob.glob(os.path.join(schema_dir, "*.schema.json"))}
    problems, printing, used = [], 0, set()

    for path in sorted(glob.glob(os.path.join(tests, "**", "*"), recursive=True)):
        rel = os.path.relpath(path, tests)
        if "Inputs" in rel.split(os.sep) or not path.endswith((".mls", ".test")):
            continue
        commands = run_lines(path)
        checked_files = {f for _, c in commands for f in VALIDATES_FILE.findall(c)}
        for number, command in commands:
            kinds = VALIDATE.findall(command)
            used.update(kinds)
            for kind in kinds:
                if kind not in schemas:
                    problems.append("%s:%d: no schema docs/schema/%s.schema.json"
                                    % (rel, number, kind))
            if not PRINTS_JSON.search(command) or NO_OUTPUT.search(command):
                continue
            printing += 1
            written = WRITES_JSON.search(command)
            if written and written.group(1) in checked_files:
                continue
            if not kinds:
                problems.append("%s:%d: RUN line prints JSON that no "
                                "%%validate-json checks: %s" % (rel, number, command))

    with open(os.path.join(args.root, "tools", "mlsc", "Options.def"),
              encoding="utf-8") as f:
        for name, formats in COMMAND.findall(f.read()):
            if "json" in formats.split(",") and name not in schemas:
                problems.append("`mlsc %s` prints JSON but docs/schema/ has no "
                                "%s.schema.json" % (name, name))
    for kind in sorted(set(schemas) - used):
        problems.append("docs/schema/%s.schema.json validates no RUN line's "
                        "output" % kind)

    copies = {}
    for kind, path in sorted(schemas.items()):
        with open(path, encoding="utf-8") as f:
            for name, definition in json.load(f).get("$defs", {}).items():
                copies.setdefault(name, []).append((kind, definition))
    for name, seen in sorted(copies.items()):
        for kind, definition in seen[1:]:
            if definition != seen[0][1]:
                problems.append("$defs/%s differs between %s.schema.json and "
                                "%s.schema.json" % (name, seen[0][0], kind))

    tables = def_tables(args.root)
    for kind, path, table in TABLE_ENUMS:
        if kind not in schemas:
            continue  # reported above
        with open(schemas[kind], encoding="utf-8") as f:
            node = json.load(f)
        for key in path.split("/"):
            node = node[int(key)] if isinstance(node, list) else node[key]
        if sorted(schema_list(node)) != sorted(tables[table]):
            problems.append("docs/schema/%s.schema.json %s lists %s, but ir/*.def "
                            "has the %s %s" % (kind, path, schema_list(node), table,
                                               tables[table]))

    for p in problems:
        print(p)
    print("%d RUN lines print JSON; %d problems" % (printing, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
