#!/usr/bin/env python3
"""What TPOT percentiles over the outputs' own lengths cost a sweep.

Runs the two 100,000-point sweeps of bench/tpot_spread.mls on one core
(`mlsc sweep --jobs=1`), alternating them REPEAT times after a warm-up,
and prints their median wall times and the ratio:
`tpot_sweep_one_length_s:`, `tpot_sweep_own_lengths_s:`,
`tpot_sweep_ratio:`. Not a test: docs/performance.md records the figures.

usage: tpot_spread_bench.py [--mlsc PATH] [--repeat N]
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
    path = os.path.join(root, "bench/tpot_spread.mls")
    env = dict(os.environ)
    env.setdefault("MLSC_DATA_DIR", root)
    cmds = {name: [args.mlsc, "sweep", "--jobs=1", "--no-progress", path, name]
            for name in ("mean_length", "own_lengths")}
    for cmd in cmds.values():
        first = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if first.returncode != 0:
            sys.stderr.write(first.stdout + first.stderr)
            return 1
    times = {name: [] for name in cmds}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            start = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True, env=env)
            times[name].append(time.perf_counter() - start)
    one = statistics.median(times["mean_length"])
    own = statistics.median(times["own_lengths"])
    print(f"tpot_sweep_one_length_s: {one:.3f}")
    print(f"tpot_sweep_own_lengths_s: {own:.3f}")
    print(f"tpot_sweep_ratio: {own / one:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
