#!/usr/bin/env python3
"""Replaying a 23,608-request, 60-minute trace (docs/performance.md).

Issue 15's peer figure: the fastest simulator replays a trace of 23,608
requests over 60 minutes in about 2.4 s. This writes such a trace (seeded
Poisson arrivals at 6.56 req/s, prompts and outputs lognormal around
1,024 and 256 tokens) and a scenario replaying it on 4 H100s into a
temporary folder, runs `mlsc eval` on it REPEAT times after a warm-up and
prints `trace_replay_s:` (the median wall time of the whole command:
reading the registries and the trace, compiling, evaluating, simulating,
printing) and `trace_requests:`.

usage: trace_bench.py [--mlsc PATH] [--repeat N]
"""
import argparse
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

SCENARIO = """import registries.systems
import registries.models.llama
workload chat : inference {
  model = llama3_1_8b; precision = bf16; prompt = 1024 tok; output = 256 tok
  batch = 256
}
node four : DGX_H100 { count = 4 }
scenario replay { workload = chat; system = four; simulate { trace = "trace.csv" } }
"""


def lognormal(rng, mean, cv):
    s2 = math.log1p(cv * cv)
    return max(1, round(math.exp(math.log(mean) - s2 / 2 +
                                 math.sqrt(s2) * rng.gauss(0, 1))))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", default=os.path.join(root, "build/bin/mlsc"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(23608)
    n, span = 23608, 3600.0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "trace.csv"), "w") as f:
            f.write("arrival_s,prompt_tokens,output_tokens\n")
            t = 0.0
            for _ in range(n):
                t += rng.expovariate(n / span)
                f.write(f"{t:.6f},{lognormal(rng, 1024, 0.8)},"
                        f"{lognormal(rng, 256, 0.8)}\n")
        mls = os.path.join(tmp, "replay.mls")
        with open(mls, "w") as f:
            f.write(SCENARIO)
        cmd = [args.mlsc, "eval", "--no-progress", mls]
        first = subprocess.run(cmd, capture_output=True, text=True)
        if first.returncode != 0 or "Simulated    23608 requests" not in first.stdout:
            sys.stderr.write(first.stdout + first.stderr)
            return 1
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
    print(f"trace_requests: {n}")
    print(f"trace_replay_s: {statistics.median(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
