"""Correct: three threads meet at a Barrier twice."""
import threading

import torch

barrier = threading.Barrier(3)
phase = []


def worker(i):
    x = torch.ones(2) * i
    barrier.wait()
    phase.append(("a", i))
    barrier.wait()
    phase.append(("b", float(x.sum())))


ts = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert [p[0] for p in phase] == ["a"] * 3 + ["b"] * 3, phase
