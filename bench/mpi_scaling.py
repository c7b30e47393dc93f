#!/usr/bin/env python3
"""Sweep time on 1 and 2 MPI ranks (docs/performance.md, "Sweeps on MPI").

Runs each sweep of bench/mpi_sweep.mls with `mlsc sweep --jobs=1` as one
process and under `mpirun -n 2` (one thread a rank), REPEAT times each
after a warm-up, checks that the two outputs are the same bytes, and
prints `mpi_<sweep>_1_rank_s:`, `mpi_<sweep>_2_ranks_s:` and
`mpi_<sweep>_speedup:` (medians, measured in one run). Needs an mlsc built
with MPI and Open MPI's mpirun; says so and exits 0 without them.

usage: mpi_scaling.py [--mlsc PATH] [--repeat N]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time


def timed(cmd, env, repeat):
    out = subprocess.run(cmd, capture_output=True, env=env, check=True).stdout
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", default=os.path.join(root, "build/bin/mlsc"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not shutil.which("mpirun"):
        print("mpi_scaling: no mpirun; skipped")
        return 0
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mls = os.path.join(root, "bench/mpi_sweep.mls")
    for sweep in ["analytic", "simulated"]:
        one = [args.mlsc, "sweep", "--jobs=1", "--no-progress", mls, sweep]
        two = ["mpirun", "--oversubscribe", "-n", "2"] + one
        t1, out1 = timed(one, env, args.repeat)
        t2, out2 = timed(two, env, args.repeat)
        if out1 != out2:
            sys.stderr.write(f"mpi_scaling: {sweep}: 2 ranks printed "
                             "something else than 1\n")
            return 1
        print(f"mpi_{sweep}_1_rank_s: {t1:.3f}")
        print(f"mpi_{sweep}_2_ranks_s: {t2:.3f}")
        print(f"mpi_{sweep}_speedup: {t1 / t2:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
