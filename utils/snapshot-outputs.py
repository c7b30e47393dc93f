#!/usr/bin/env python3
"""Record what mlsc prints for the bundled examples and test scenarios.

Runs every command a user would run on each scenario file (eval, check,
solve, sweep, sensitivity, explain of every metric, the graph dump, each as
text and JSON), plus `walls` and `audit`, and writes one file per command
with its stdout, stderr and exit code. Two snapshots taken with two builds
are compared with `diff -r`: a restructuring of the back end must leave
them byte-identical except for named bug fixes.

    utils/snapshot-outputs.py --mlsc build/bin/mlsc --out /tmp/after
    diff -r /tmp/before /tmp/after

With --root, the scenario files, stdlib and registries are read from
another checkout (say, the commit before the change, `git worktree add`),
so that both builds read the same inputs while the tests change.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Scenario files: the examples, and every lit test that evaluates (not the
# negative tests, whose output is their diagnostics, checked by lit).
FILE_DIRS = ["examples", "examples/golden", "test/lit/eval", "test/lit/query",
             "test/lit/anchors", "bench"]


def scenario_files():
    files = []
    for d in FILE_DIRS:
        full = os.path.join(ROOT, d)
        for name in sorted(os.listdir(full)):
            if name.endswith(".mls"):
                files.append(os.path.join(d, name))
    return files


class Runner:
    def __init__(self, mlsc, out, workdir):
        self.mlsc = mlsc
        self.out = out
        self.workdir = workdir
        self.count = 0

    def run(self, key, args):
        env = dict(os.environ, MLSC_DATA_DIR=ROOT)
        proc = subprocess.run([self.mlsc] + args, cwd=self.workdir, env=env,
                              capture_output=True, timeout=300)
        path = os.path.join(self.out, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"$ mlsc " + " ".join(args).replace(ROOT, "<src>")
                    .encode() + b"\n")
            f.write(b"exit " + str(proc.returncode).encode() + b"\n")
            f.write(b"--- stdout\n" + proc.stdout.replace(ROOT.encode(),
                                                          b"<src>"))
            f.write(b"--- stderr\n" + proc.stderr.replace(ROOT.encode(),
                                                          b"<src>"))
        self.count += 1
        return proc


def snapshot_file(r, rel):
    src = os.path.join(ROOT, rel)
    key = rel.replace("/", "__")
    r.run(f"{key}/compile", [src])
    r.run(f"{key}/graph", ["--emit=graph", src])
    proc = r.run(f"{key}/eval", ["eval", src])
    if proc.returncode != 0:
        return
    r.run(f"{key}/check", ["check", src])
    r.run(f"{key}/check.json", ["check", "--format=json", src])
    proc = r.run(f"{key}/eval.json", ["eval", "--format=json", src])
    r.run(f"{key}/solve", ["solve", src])
    r.run(f"{key}/solve.json", ["solve", "--format=json", src])
    r.run(f"{key}/sweep", ["sweep", "--jobs=1", "--no-progress", src])
    r.run(f"{key}/sweep.j2", ["sweep", "--jobs=2", "--no-progress", src])
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        return
    for s in data.get("scenarios", []):
        name = s["scenario"]
        r.run(f"{key}/sens.{name}", ["sensitivity", src, name])
        r.run(f"{key}/sens.{name}.json",
              ["sensitivity", "--format=json", src, name])
        metrics = list(s.get("performance", {}).get("metrics", {}).keys())
        for m in metrics + ["decode.memory_time", "prefill_time",
                            "batch_time", "memory_per_device"]:
            r.run(f"{key}/explain.{name}.{m}",
                  ["explain", src, f"{name}.{m}"])
            r.run(f"{key}/explain.{name}.{m}.json",
                  ["explain", "--format=json", src, f"{name}.{m}"])
            r.run(f"{key}/leaves.{name}.{m}",
                  ["explain", "--leaves", src, f"{name}.{m}"])


def main():
    global ROOT
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mlsc", required=True, help="the mlsc binary to run")
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("--root", default=ROOT,
                   help="the checkout whose files are read (default: this)")
    args = p.parse_args()
    ROOT = os.path.abspath(args.root)
    mlsc = os.path.abspath(args.mlsc)
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        r = Runner(mlsc, os.path.abspath(args.out), work)
        r.run("walls", ["walls"])
        r.run("walls.json", ["walls", "--format=json"])
        r.run("audit", ["audit", "--as-of=2026-12-01"])
        r.run("audit.json", ["audit", "--as-of=2026-12-01", "--format=json"])
        for rel in scenario_files():
            snapshot_file(r, rel)
        # Sweeps may write their `output` files into the working folder.
        for name in sorted(os.listdir(work)):
            with open(os.path.join(work, name), "rb") as f:
                data = f.read()
            with open(os.path.join(args.out, "written__" + name), "wb") as f:
                f.write(data)
    print(f"{r.count} commands recorded in {args.out}")


if __name__ == "__main__":
    sys.exit(main())
