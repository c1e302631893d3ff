"""A ThreadPoolExecutor scores a batch; results are collected with as_completed(timeout) and result(timeout).

  python futures_as_completed.py [correct|racy]
"""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
score = torch.compile(lambda x: (x * x).sum(), backend="eager")
stats = {"calls": 0}
stats_lock = threading.Lock()


def job(i):
    value = float(score(torch.full((2,), float(i))))
    if mode == "racy":
        calls = stats["calls"]
        score(torch.ones(2))
        stats["calls"] = calls + 1
    else:
        with stats_lock:
            stats["calls"] += 1
    return value


def main():
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(job, i) for i in range(3)]
        got = sorted(f.result(timeout=30) for f in as_completed(futures, timeout=60))
    assert got == [0.0, 2.0, 8.0], got
    assert stats["calls"] == 3, f"{stats['calls']} of 3 calls counted"


if __name__ == "__main__":
    main()
