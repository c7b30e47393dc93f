"""Reads frontend/Diagnostics.def for the scripts that check and document it.

Each entry is `DIAGNOSTIC(Kind, Severity, "Summary")`; the `// Heading.`
comment above a run of entries names their group. An entry this reader cannot
parse is an error, never silently skipped: the coverage check and the
generated table must see every kind the compiler has.
"""
import os
import re
from collections import namedtuple

Kind = namedtuple("Kind", "name severity summary group")

DEF_PATH = os.path.join("frontend", "Diagnostics.def")
_ENTRY = re.compile(
    r'DIAGNOSTIC\(\s*(\w+)\s*,\s*(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)', re.S)
_SEVERITIES = ("Error", "Warning", "Note")


def read_kinds(root):
    """Every kind in Diagnostics.def under source root `root`, in order."""
    path = os.path.join(root, DEF_PATH)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    kinds, group = [], ""
    # Entries start at the beginning of a line; the `#define`/`#error` lines
    # and the header comment mention DIAGNOSTIC( elsewhere.
    starts = [m.start() for m in re.finditer(r"^DIAGNOSTIC\(", text, re.M)]
    headings = [(m.start(), m.group(1)) for m in
                re.finditer(r"^// (\S.*?)\.?\s*$", text, re.M)]
    for start in starts:
        m = _ENTRY.match(text, start)
        line = text.count("\n", 0, start) + 1
        if not m or m.group(2) not in _SEVERITIES:
            raise ValueError("%s:%d: cannot read this DIAGNOSTIC entry" %
                             (path, line))
        for pos, heading in headings:
            if pos < start:
                group = heading
        summary = m.group(3).replace('\\"', '"').replace("\\\\", "\\")
        kinds.append(Kind(m.group(1), m.group(2), summary, group))
    names = [k.name for k in kinds]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError("%s: kinds declared twice: %s" %
                         (path, ", ".join(duplicates)))
    if not kinds:
        raise ValueError("%s: no DIAGNOSTIC entries" % path)
    return kinds
