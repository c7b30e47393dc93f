#!/usr/bin/env python3
"""Wall-clock latency of `mlsc eval FILE`, imports included.

Runs the command REPEAT times after one warm-up run and prints one
`name: value` line per figure (milliseconds). Not a test: the budget
(50 ms for examples/quickstart.mls) is recorded in docs/performance.md.

usage: eval_latency.py [--mlsc PATH] [--repeat N] [FILE]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.join(here, "..")
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", default=os.path.join(root, "build", "bin", "mlsc"))
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("file", nargs="?", default=os.path.join(root, "examples", "quickstart.mls"))
    args = ap.parse_args()
    cmd = [args.mlsc, "eval", args.file]
    subprocess.run(cmd, check=True, capture_output=True)
    samples = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    name = os.path.basename(args.file)
    print(f"eval_{name}_median_ms: {statistics.median(samples):.2f}")
    print(f"eval_{name}_p90_ms: {samples[int(0.9 * (len(samples) - 1))]:.2f}")
    print(f"eval_{name}_min_ms: {samples[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
