#!/usr/bin/env python3
"""Checks mlsc's plots without a browser (docs/reports.md, "Tests").

  check-plots.py report --schema vega-schema.json [--max-bytes N] PAGE...
      Every plot spec in each `mlsc report` page is valid Vega (against
      Vega's own JSON Schema, which the build writes), has a title, and
      the page is self-contained: no <script src>, <link> or other
      reference that would fetch anything.
  check-plots.py spec --schema vega-schema.json SPEC.json...
      The same for specs printed by --format=vega.
  check-plots.py svg FILE.svg...
      Each SVG (from --format=svg) is well-formed XML with an <svg> root of
      non-zero size, has axes, and every axis with a title names a unit in
      brackets ("HBM bandwidth [TB/s]") or is a band of names; every axis
      has tick labels.

Exit 0 when everything passes; 1 with one line per failure otherwise.
"""

import argparse
import html
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"


def validator(schema_path):
    import jsonschema
    with open(schema_path) as f:
        schema = json.load(f)
    return jsonschema.validators.validator_for(schema)(schema)


def check_spec(v, spec, where, failures):
    for e in list(v.iter_errors(spec))[:5]:
        failures.append(f"{where}: not valid Vega at "
                        f"/{'/'.join(map(str, e.absolute_path))}: "
                        f"{e.message[:200]}")
    title = [s for s in spec.get("signals", []) if s.get("name") == "title"]
    if not title or not title[0].get("value"):
        failures.append(f"{where}: the plot has no title")


def check_report(v, page, max_bytes, failures):
    size = os.path.getsize(page)
    if max_bytes and size > max_bytes:
        failures.append(f"{page}: {size} bytes, over {max_bytes}")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    for pat, what in [(r"<script[^>]*\ssrc=", "a <script src>"),
                      (r"<link\b", "a <link>"),
                      (r"<img\b", "an <img>"),
                      (r"<iframe\b", "an <iframe>"),
                      (r"""\shref=["']https?:""", "a link out")]:
        if re.search(pat, text):
            failures.append(f"{page}: not self-contained: {what}")
    m = re.search(r'<script type="application/json" id="mlsc-plots">(.*?)'
                  r'</script>', text, re.S)
    if not m:
        failures.append(f"{page}: no plot specs")
        return 0
    specs = json.loads(m.group(1))
    divs = re.findall(r'class="mlsc-plot" id="mlsc-plot-(\d+)" '
                      r'data-plot="([^"]*)"', text)
    if [int(i) for i, _ in divs] != list(range(len(specs))):
        failures.append(f"{page}: {len(divs)} plot elements for "
                        f"{len(specs)} specs")
    for (_, pid), spec in zip(divs, specs):
        check_spec(v, spec, f"{page}: {html.unescape(pid)}", failures)
    return len(specs)


def check_svg(path, failures):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        failures.append(f"{path}: not well-formed XML: {e}")
        return
    if root.tag != SVG_NS + "svg":
        failures.append(f"{path}: the root is {root.tag}, not <svg>")
        return
    w, h = float(root.get("width", 0)), float(root.get("height", 0))
    if not (w > 0 and h > 0):
        failures.append(f"{path}: size {w} x {h}")
    axes = [g for g in root.iter(SVG_NS + "g")
            if "role-axis" in (g.get("class") or "") and g.get("aria-label")]
    if not axes:
        failures.append(f"{path}: no axis")
    titled = 0
    for g in axes:
        label = g.get("aria-label")
        labels = [t for t in g.iter(SVG_NS + "text") if (t.text or "").strip()]
        if not labels:
            failures.append(f"{path}: an axis without labels: {label}")
        m = re.search(r"titled '(.*?)' for a", label)
        if m:
            titled += 1
            categorical = re.search(r"for a (band|point|discrete)", label)
            if not categorical and not re.search(r"\[[^\]]+\]", m.group(1)):
                failures.append(f"{path}: axis title without a unit: "
                                f"{m.group(1)}")
        elif "discrete" not in label and "point" not in label:
            failures.append(f"{path}: a continuous axis without a title: "
                            f"{label}")
    if axes and not titled:
        failures.append(f"{path}: no axis has a title")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["report", "spec", "svg"])
    ap.add_argument("--schema")
    ap.add_argument("--max-bytes", type=int, default=0)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    failures = []
    if a.mode in ("report", "spec"):
        if not a.schema:
            ap.error("--schema is required")
        v = validator(a.schema)
    for f in a.files:
        if a.mode == "report":
            n = check_report(v, f, a.max_bytes, failures)
            print(f"{os.path.basename(f)}: {n} plots")
        elif a.mode == "spec":
            with open(f) as fh:
                check_spec(v, json.load(fh), f, failures)
        else:
            check_svg(f, failures)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
