#!/usr/bin/env python3
"""Wall-clock latency of `mlsc eval FILE`, imports included.

Runs the command REPEAT times after one warm-up run and prints one
`name: value` line per figure (milliseconds). Not a test: the budget
(50 ms for examples/quickstart.mls) is recorded in docs/performance.md.

With --all-registries, FILE is generated: a scenario that imports every
module under registries/ (budget 100 ms).

usage: eval_latency.py [--mlsc PATH] [--repeat N] [--all-registries] [FILE]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SCENARIO = """
model bench_model { params = 8e9; layers = 32; hidden = 4096; heads = 32; kv_heads = 8 }
accelerator bench_gpu { hbm.capacity = 80 GB; hbm.bandwidth = 3.35 TB/s; tdp = 700 W
                        peak.bf16 = 989 TFLOP/s }
workload bench_chat : inference { model = bench_model; precision = bf16
                                  prompt = 1024 tok; output = 128 tok; batch = 8 }
scenario bench { workload = bench_chat; system = bench_gpu }
"""


def all_registries_file(root):
    imports = []
    reg = os.path.join(root, "registries")
    for dirpath, _, files in sorted(os.walk(reg)):
        for f in sorted(files):
            if f.endswith(".mls"):
                rel = os.path.relpath(os.path.join(dirpath, f), root)[:-4]
                imports.append("import " + rel.replace(os.sep, "."))
    tmp = tempfile.NamedTemporaryFile("w", suffix=".mls", delete=False)
    tmp.write("\n".join(imports) + "\n" + SCENARIO)
    tmp.close()
    return tmp.name, len(imports)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.join(here, "..")
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlsc", default=os.path.join(root, "build", "bin", "mlsc"))
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--all-registries", action="store_true")
    ap.add_argument("file", nargs="?", default=os.path.join(root, "examples", "quickstart.mls"))
    args = ap.parse_args()
    name = os.path.basename(args.file)
    if args.all_registries:
        args.file, modules = all_registries_file(root)
        name = "all_registries"
        print(f"{name}_modules: {modules}")
    cmd = [args.mlsc, "eval", args.file]
    subprocess.run(cmd, check=True, capture_output=True)
    samples = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    if args.all_registries:
        os.unlink(args.file)
    print(f"eval_{name}_median_ms: {statistics.median(samples):.2f}")
    print(f"eval_{name}_p90_ms: {samples[int(0.9 * (len(samples) - 1))]:.2f}")
    print(f"eval_{name}_min_ms: {samples[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
