#!/usr/bin/env python3
"""Fails when some diagnostic kind is exercised by no lit test.

Reads the kinds from frontend/Diagnostics.def and looks for `[KindName]` in
the tests under test/lit. Only lines that assert something count: an
`expected-error`, `expected-warning` or `expected-note` comment (checked by
--verify-diagnostics) or a FileCheck `CHECK` line (any prefix, any suffix
such as -NEXT). A kind named only in prose, or only in a helper module under
an `Inputs/` folder (which lit does not run), is not covered.

UNREACHABLE lists the kinds the compiler declares but cannot produce from any
input, each with the reason; they are reported, not required. A listed kind
that a test does cover, or that Diagnostics.def no longer has, is an error,
so the list cannot go stale.

usage: check-diagnostic-coverage.py SRC_ROOT
Exit status 0 when every reachable kind is covered, 1 otherwise.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diagnostics_def import read_kinds  # noqa: E402

# Kinds declared but impossible to produce, with the reason. Keep empty:
# a kind nothing reports should be removed from Diagnostics.def.
UNREACHABLE = {}

TEST_SUFFIXES = (".mls", ".test")
EXPECTATION = re.compile(r"expected-(?:error|warning|note)\b[^{]*\{\{")
# FileCheck directives: `CHECK:`, `CHECK-NEXT:`, `ERR-SAME:`, `# CHECK:`.
DIRECTIVE = re.compile(r"\s*(?:#\s*)?([A-Z][A-Z0-9_]*)(?:-[A-Z]+)?:")
NOT_CHECKS = {"RUN", "REQUIRES", "UNSUPPORTED", "XFAIL"}
KIND_REF = re.compile(r"\[([A-Z][A-Za-z0-9]*)\]")


def covered_kinds(lit_root):
    """Kind name -> first `file:line` that asserts it."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(lit_root):
        dirnames[:] = sorted(d for d in dirnames if d != "Inputs")
        for name in sorted(filenames):
            if not name.endswith(TEST_SUFFIXES):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    if not is_assertion(line):
                        continue
                    for kind in KIND_REF.findall(line):
                        found.setdefault(kind, "%s:%d" % (
                            os.path.relpath(path, lit_root), number))
    return found


def is_assertion(line):
    if EXPECTATION.search(line):
        return True
    m = DIRECTIVE.match(line)
    return m is not None and m.group(1) not in NOT_CHECKS


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    root = argv[1]
    try:
        kinds = read_kinds(root)
    except (OSError, ValueError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    names = [k.name for k in kinds]
    found = covered_kinds(os.path.join(root, "test", "lit"))
    problems = []
    missing = [n for n in names if n not in found and n not in UNREACHABLE]
    if missing:
        problems.append(
            "%d diagnostic kind(s) exercised by no test under test/lit "
            "(add an `expected-...` or CHECK line naming `[Kind]`):\n%s" % (
                len(missing), "\n".join("  " + n for n in missing)))
    for name in sorted(UNREACHABLE):
        if name not in names:
            problems.append("%s is listed as unreachable but is not in "
                            "Diagnostics.def; remove it from UNREACHABLE" % name)
        elif name in found:
            problems.append("%s is listed as unreachable but %s covers it; "
                            "remove it from UNREACHABLE" % (name, found[name]))
    for p in problems:
        print("error: " + p)
    if problems:
        return 1
    reachable = len(names) - len(UNREACHABLE)
    print("%d of %d reachable diagnostic kinds covered" % (reachable, reachable))
    for name in sorted(UNREACHABLE):
        print("not reachable: %s (%s)" % (name, UNREACHABLE[name]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
