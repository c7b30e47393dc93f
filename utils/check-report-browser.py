#!/usr/bin/env python3
"""Opens `mlsc report` pages in headless Chromium and checks what a reader
would see (docs/reports.md, "Tests"):

  - no JavaScript error and no console message while the page renders
    (Chromium's console log on stderr, and the errors the page's own script
    caught);
  - every plot of the page rendered: its element exists and its SVG has a
    non-zero width and height (the page writes what it saw into
    #mlsc-status);
  - a screenshot of the page is not blank: enough pixels differ from the
    background and enough colours are used.

Usage: check-report-browser.py [--chromium PATH] [--screenshots DIR] PAGE...
Exit 0 when every page passes; 1 with one line per failure otherwise.
"""

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# What the machine's Chromium needs to run headless here, as root, with no
# network (the environment's notes): no sandbox, no GPU, no background
# connections.
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--disable-extensions", "--mute-audio",
]


def chromium(binary, profile, extra, page, timeout=120):
    cmd = [binary] + FLAGS + ["--user-data-dir=" + profile] + extra + [
        "file://" + os.path.abspath(page)]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout, text=True)


def console_lines(stderr):
    """Console messages and uncaught errors Chromium logged."""
    return [l for l in stderr.splitlines() if ":CONSOLE" in l]


def check_status(dom, failures, page):
    m = re.search(r'<pre id="mlsc-status"[^>]*>(.*?)</pre>', dom, re.S)
    if not m or not m.group(1).strip():
        failures.append(f"{page}: the page's script never finished "
                        "(#mlsc-status is empty)")
        return None
    status = json.loads(html.unescape(m.group(1)))
    plots = len(re.findall(r'class="mlsc-plot"', dom))
    if status["plots"] != plots:
        failures.append(f"{page}: {plots} plot elements, "
                        f"{status['plots']} specs")
    if status["rendered"] != status["plots"]:
        failures.append(f"{page}: {status['rendered']} of {status['plots']} "
                        "plots rendered")
    for f in status["failed"]:
        failures.append(f"{page}: a plot failed: {f}")
    for e in status["errors"]:
        failures.append(f"{page}: JavaScript error: {e}")
    for s in status["sizes"]:
        if not (s["width"] > 0 and s["height"] > 0):
            failures.append(f"{page}: plot {s['id']} has size "
                            f"{s['width']} x {s['height']}")
    return status


def blank_check(png, failures, page):
    from PIL import Image
    img = Image.open(png).convert("RGB")
    w, h = img.size
    pixels = img.getdata()
    background = pixels[0]
    differ = sum(1 for p in pixels if p != background)
    colours = len(img.getcolors(maxcolors=1 << 20) or [])
    # A page of text alone differs in a few per cent of its pixels and has
    # grey levels only; plots add filled areas in several hues.
    if differ < 0.03 * w * h or colours < 32:
        failures.append(f"{page}: the screenshot looks blank ({differ} of "
                        f"{w * h} pixels differ from the background, "
                        f"{colours} colours)")
    return differ / (w * h), colours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", default=shutil.which("chromium") or
                    "/usr/bin/chromium")
    ap.add_argument("--screenshots", help="keep the screenshots here")
    ap.add_argument("--height", type=int, default=3000)
    ap.add_argument("pages", nargs="+")
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for page in a.pages:
            profile = tempfile.mkdtemp(dir=tmp)
            extra = ["--enable-logging=stderr", "--v=0",
                     "--virtual-time-budget=10000", "--dump-dom"]
            r = chromium(a.chromium, profile, extra, page)
            if r.returncode != 0:
                failures.append(f"{page}: chromium exited {r.returncode}: "
                                f"{r.stderr[-500:]}")
                continue
            lines = console_lines(r.stderr)
            for line in lines[:5]:
                failures.append(f"{page}: console: {line.strip()}")
            if len(lines) > 5:
                failures.append(f"{page}: ... {len(lines) - 5} more "
                                "console messages")
            status = check_status(r.stdout, failures, page)
            shot_dir = a.screenshots or tmp
            shot = os.path.join(shot_dir, os.path.basename(page) + ".png")
            r = chromium(a.chromium, profile, [
                f"--window-size=1200,{a.height}",
                "--virtual-time-budget=10000", "--screenshot=" + shot], page)
            if r.returncode != 0 or not os.path.exists(shot):
                failures.append(f"{page}: no screenshot: {r.stderr[-300:]}")
                continue
            share, colours = blank_check(shot, failures, page)
            if status:
                print(f"{os.path.basename(page)}: {status['rendered']} of "
                      f"{status['plots']} plots rendered, no error; "
                      f"screenshot {share:.0%} drawn, {colours} colours")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
