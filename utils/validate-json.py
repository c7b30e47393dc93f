#!/usr/bin/env python3
"""Checks one JSON output of mlsc against its schema and passes it on.

Reads a document on standard input, validates it against
docs/schema/KIND.schema.json (or the schema --schema names) and copies the
input to standard output unchanged, so that it can stand in a pipe before
FileCheck (lit's `%validate-json KIND`):

    mlsc eval --format=json f.mls | validate-json.py eval | FileCheck f.mls

Exits 1 when the input is not JSON (duplicate keys, NaN and Infinity
included) or breaks the schema, with one line a violation naming the JSON
pointer of the value at fault; 2 on a usage error.
"""
import argparse
import json
import os
import sys

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "docs", "schema")
MAX_SHOWN = 20


def pointer(path):
    """The RFC 6901 pointer of a jsonschema error's absolute_path."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "(the document)"


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    for k in keys:
        if keys.count(k) > 1:
            raise ValueError("duplicate key %s" % json.dumps(k))
    return dict(pairs)


def not_json(constant):
    raise ValueError("%s is not JSON" % constant)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", nargs="?",
                    help="the output kind: docs/schema/KIND.schema.json")
    ap.add_argument("--schema", help="the schema file (in place of KIND)")
    args = ap.parse_args()
    if bool(args.kind) == bool(args.schema):
        ap.error("give KIND or --schema FILE")
    path = args.schema or os.path.join(SCHEMA_DIR, args.kind + ".schema.json")
    label = args.kind or os.path.basename(path)
    try:
        import jsonschema
    except ImportError:
        print("validate-json: the Python module jsonschema is missing "
              "(Debian: apt-get install python3-jsonschema)", file=sys.stderr)
        return 2
    try:
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        print("validate-json: cannot read the schema %s: %s" % (path, e),
              file=sys.stderr)
        return 2
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)

    data = sys.stdin.buffer.read()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    try:
        doc = json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates,
                         parse_constant=not_json)
    except ValueError as e:
        print("validate-json: %s: the input is not JSON: %s" % (label, e),
              file=sys.stderr)
        return 1
    errors = sorted(cls(schema).iter_errors(doc),
                    key=lambda e: [str(p) for p in e.absolute_path])
    for e in errors[:MAX_SHOWN]:
        # Within oneOf, anyOf and if/then, the branch that came closest.
        e = jsonschema.exceptions.best_match([e])
        message = e.message if len(e.message) <= 300 else e.message[:300] + "..."
        print("validate-json: %s: %s: %s" % (label, pointer(e.absolute_path),
                                             message), file=sys.stderr)
    if len(errors) > MAX_SHOWN:
        print("validate-json: %s: %d more violations" %
              (label, len(errors) - MAX_SHOWN), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
