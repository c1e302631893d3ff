#!/usr/bin/env python3
# tests/bench/start_up_figures.py -- start-up of two racelab binaries, before
# and after a change, beside the launch of /bin/true, in one run
# (docs/RESULTS.md, "Lean start"). Not a test: figures, as ratios.
#
#   python3 tests/bench/start_up_figures.py OLD_RACELAB NEW_RACELAB [RUNS]
#
# For each binary: the median wall time of `racelab version` and of
# `racelab exec -n 1 -q -- /bin/true` (start, worker, one trial, exit), the
# cases run in turn so that a change in the machine's load touches all; and the
# shared libraries mapped by racelab and by its worker while an exec trial
# runs (all of them, and those of LibTorch: libtorch*, libc10*).
import re
import statistics
import subprocess
import sys
import time

old, new = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15


def launch(argv):
    t = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dt = (time.perf_counter() - t) * 1000
    if r.returncode != 0:
        raise SystemExit(f"{argv}: exit {r.returncode}")
    return dt


def libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        paths = {line.split()[-1] for line in f if ".so" in line and "/" in line}
    return len(paths), sum(1 for p in paths if re.search(r"/lib(torch|c10)", p))


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def mapped(binary):
    # A program that runs a while without sleeping (no clock, no sleep call):
    # racelab and its worker are read while its trial runs.
    loop = "i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done"
    p = subprocess.Popen([binary, "exec", "-n", "1", "-q", "--timeout", "120", "--", "/bin/sh", "-c", loop],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            workers = children(p.pid)
            if workers and children(workers[0]):
                return {"racelab": libraries(p.pid), "worker": libraries(workers[0])}
            time.sleep(0.05)
        return None
    finally:
        p.wait()


cases = {
    "/bin/true": ["/bin/true"],
    "old version": [old, "version"],
    "new version": [new, "version"],
    "old exec": [old, "exec", "-n", "1", "-q", "--", "/bin/true"],
    "new exec": [new, "exec", "-n", "1", "-q", "--", "/bin/true"],
}
times = {k: [] for k in cases}
for _ in range(runs):
    for k, argv in cases.items():
        times[k].append(launch(argv))
med = {k: statistics.median(v) for k, v in times.items()}
print(f"{runs} runs each, medians")
for k in cases:
    print(f"  {k:12s} {med[k]:9.2f} ms  {med[k] / med['/bin/true']:7.1f}x /bin/true")
print(f"  old / new: version {med['old version'] / med['new version']:.0f}x, "
      f"exec {med['old exec'] / med['new exec']:.0f}x")
for name, b in (("old", old), ("new", new)):
    print(f"  {name}: shared libraries mapped (all, LibTorch's) while an exec trial runs: {mapped(b)}")
