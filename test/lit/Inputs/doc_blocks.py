"""Writes the fenced blocks of a Markdown page that are tagged
`<!-- walkthrough: NAME -->` (on the line before the fence) to DIR/NAME, so
that a test runs exactly what the page shows.

usage: doc_blocks.py PAGE.md DIR
"""
import os
import re
import sys

TAG = re.compile(r"^<!-- walkthrough: (\S+) -->$")

page, folder = sys.argv[1], sys.argv[2]
with open(page, encoding="utf-8") as f:
    lines = f.read().split("\n")
written = 0
for i, line in enumerate(lines):
    m = TAG.match(line)
    if not m:
        continue
    if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
        sys.exit(f"{page}:{i + 1}: a walkthrough tag must stand on the line before a fence")
    end = lines.index("```", i + 2)
    with open(os.path.join(folder, m.group(1)), "w", encoding="utf-8") as f:
        f.write("\n".join(lines[i + 2:end]) + "\n")
    written += 1
print(f"{written} blocks")
