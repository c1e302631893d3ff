"""Ranks warm their compiled step, meet at a Barrier (with a timeout), then read each other's results.

  python barrier_timeout.py [correct|racy]
"""
import sys
import threading

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "correct"
RANKS = 3
step = torch.compile(lambda x: x * 3, backend="eager")
barrier = threading.Barrier(RANKS, timeout=30)
outputs = [None] * RANKS
totals = []


def rank(r):
    outputs[r] = float(step(torch.full((1,), float(r)))[0])
    if mode == "correct":
        barrier.wait()  # everyone's output is written before anyone reads
    totals.append(sum(o for o in outputs if o is not None))


if __name__ == "__main__":
    threads = [threading.Thread(target=rank, args=(r,)) for r in range(RANKS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert totals == [9.0] * RANKS, totals
