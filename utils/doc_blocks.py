"""The ```mls blocks of a Markdown file, for the checks that compile and
format the documentation's examples (check-doc-examples.py, check-fmt.py).
"""
import re

FENCE = re.compile(r"^```(mls(?: verify)?)\s*$")


def blocks(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i + 1
        j = start
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        yield start + 1, m.group(1), "\n".join(lines[start:j]) + "\n"
        i = j + 1
