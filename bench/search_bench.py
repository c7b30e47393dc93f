#!/usr/bin/env python3
"""Wall-clock time of the parallelism search of bench/search_16k.mls.

Runs `mlsc sweep --jobs=1` (one core) on it REPEAT times after one warm-up
run and prints `search_16k_s: <median seconds>`: Llama 3.1 405B on 16,384
H100s, 18,000 layouts (tp x pp x cp x vp x micro-batch x ZeRO stage x
recomputation)
evaluated, ruled out or ranked, the whole command included (reading the
registries, compiling, lowering). Not a test: the budget (1 s) is recorded
in docs/performance.md.

usage: search_bench.py [--mlsc PATH] [--repeat N]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", default=os.path.join(root, "build/bin/mlsc"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    cmd = [args.mlsc, "sweep", "--jobs=1", "--no-progress",
           os.path.join(root, "bench/search_16k.mls")]
    first = subprocess.run(cmd, capture_output=True, text=True)
    if first.returncode != 0:
        sys.stderr.write(first.stdout + first.stderr)
        return 1
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    print(f"search_16k_s: {statistics.median(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
