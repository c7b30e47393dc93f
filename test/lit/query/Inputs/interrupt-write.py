"""Interrupts `mlsc sweep` while its table sits in the temporary file and
checks that neither the temporary nor the target is left behind.

usage: interrupt-write.py MLSC SCENARIO TEMPLATE
The scenario is written from TEMPLATE with `output = "interrupted.csv"`;
MLSC_TEST_HOLD_TEMPORARY (docs/driver.md) holds the finished temporary
before the rename, so the signal lands while it exists.
"""
import glob
import os
import signal
import subprocess
import sys
import time

mlsc, scenario, template = sys.argv[1:4]
with open(template) as f:
    text = f.read().replace("OUT", "interrupted.csv")
for sig in (signal.SIGTERM, signal.SIGINT):
    with open(scenario, "w") as f:
        f.write(text)
    env = dict(os.environ, MLSC_TEST_HOLD_TEMPORARY="10")
    # A shell that runs tests may ignore SIGINT; the child gets the default.
    p = subprocess.Popen([mlsc, "sweep", scenario], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                          signal.SIG_DFL))
    deadline = time.time() + 20
    while not glob.glob(".mlsc-*.tmp") and time.time() < deadline:
        time.sleep(0.02)
    if not glob.glob(".mlsc-*.tmp"):
        p.kill()
        sys.exit("no temporary file appeared")
    p.send_signal(sig)
    p.wait()
    left = glob.glob(".mlsc-*.tmp")
    if left or os.path.exists("interrupted.csv"):
        sys.exit(f"after {sig.name}: left {left}, target "
                 f"{os.path.exists('interrupted.csv')}")
    print(f"{sig.name}: nothing left behind")
