"""Interrupts `mlsc sweep` while its table sits in the temporary file and
checks that neither the temporary nor the target is left behind.

usage: interrupt-write.py MLSC SCENARIO TEMPLATE
The scenario is written from TEMPLATE with `output = "interrupted.csv"`;
MLSC_TEST_HOLD_TEMPORARY (docs/driver.md) holds the finished temporary
before the rename, so the signal lands while it exists. Then, on Linux,
SIGINT is sent the moment the temporary is created (inotify), ten times:
a process that created the file before scheduling its removal left it
behind under load (CI, stop 38).
"""
import ctypes
import ctypes.util
import glob
import os
import select
import signal
import subprocess
import sys
import time

mlsc, scenario, template = sys.argv[1:4]
with open(template) as f:
    text = f.read().replace("OUT", "interrupted.csv")


def start(hold):
    env = dict(os.environ, MLSC_TEST_HOLD_TEMPORARY=hold)
    # A shell that runs tests may ignore SIGINT; the child gets the default.
    return subprocess.Popen([mlsc, "sweep", scenario], env=env,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                             signal.SIG_DFL))


def check(what):
    left = glob.glob(".mlsc-*.tmp")
    if left or os.path.exists("interrupted.csv"):
        sys.exit(f"after {what}: left {left}, target "
                 f"{os.path.exists('interrupted.csv')}")


with open(scenario, "w") as f:
    f.write(text)
for sig in (signal.SIGTERM, signal.SIGINT):
    p = start("10")
    deadline = time.time() + 20
    while not glob.glob(".mlsc-*.tmp") and time.time() < deadline:
        time.sleep(0.02)
    if not glob.glob(".mlsc-*.tmp"):
        p.kill()
        sys.exit("no temporary file appeared")
    p.send_signal(sig)
    p.wait()
    check(sig.name)
    print(f"{sig.name}: nothing left behind")

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6",
                   use_errno=True)
if not hasattr(libc, "inotify_init"):
    sys.exit(0)
IN_CREATE = 0x100
for attempt in range(10):
    fd = libc.inotify_init()
    if fd < 0 or libc.inotify_add_watch(fd, b".", IN_CREATE) < 0:
        sys.exit("inotify is not available")
    p = start("1")
    created = False
    deadline = time.time() + 20
    while not created:
        if not select.select([fd], [], [], max(0, deadline - time.time()))[0]:
            p.kill()
            sys.exit("no temporary file appeared")
        events = os.read(fd, 4096)
        at = 0
        while at < len(events):
            length = int.from_bytes(events[at + 12:at + 16], sys.byteorder)
            name = events[at + 16:at + 16 + length]
            created = created or name.startswith(b".mlsc-")
            at += 16 + length
    p.send_signal(signal.SIGINT)
    p.wait()
    os.close(fd)
    check(f"SIGINT at creation, attempt {attempt + 1}")
print("SIGINT at creation: nothing left behind, 10 times")
