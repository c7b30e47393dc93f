#!/usr/bin/python3
"""Makes the screenshot that docs/reports.md shows: `mlsc report` of an
example, opened in headless Chromium, the top of the page cropped to its
content and saved as PNG. Run with Debian's Python (python3-pil):

    utils/report-screenshot.py --mlsc build/bin/mlsc \\
        --example examples/quickstart.mls --out docs/images/report-quickstart.png

Exit 0 when the screenshot was written; 1 otherwise.
"""

import argparse
import os
import subprocess
import sys
import tempfile

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--disable-extensions", "--mute-audio",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=1800)
    a = ap.parse_args()
    from PIL import Image
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "report.html")
        subprocess.run([a.mlsc, "report", a.example, "-o", page], check=True,
                       stdout=subprocess.DEVNULL)
        shot = os.path.join(tmp, "shot.png")
        subprocess.run([a.chromium] + FLAGS + [
            "--user-data-dir=" + os.path.join(tmp, "profile"),
            f"--window-size={a.width},{a.height}",
            "--virtual-time-budget=10000", "--screenshot=" + shot,
            "file://" + page], check=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, timeout=120)
        img = Image.open(shot).convert("RGB")
        # Crop to what is drawn, with a margin.
        inverted = Image.eval(img.convert("L"), lambda v: 255 - v)
        box = inverted.getbbox()
        if not box:
            print("report-screenshot: the page is blank", file=sys.stderr)
            return 1
        left, top = max(box[0] - 16, 0), max(box[1] - 16, 0)
        right = min(box[2] + 16, img.width)
        bottom = min(box[3] + 16, img.height)
        img = img.crop((left, top, right, bottom))
        # Fewer colours keep the PNG small; the plots use few.
        img = img.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        tmp_out = a.out + ".tmp"
        img.save(tmp_out, format="PNG", optimize=True)
        os.replace(tmp_out, a.out)
    print(f"report-screenshot: wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
