"""Correct: workers wait on an Event that the main thread sets after starting them."""
import threading

import torch

go = threading.Event()
results = []


def worker(i):
    go.wait()
    results.append(torch.ones(2).sum().item() + i)


ts = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
for t in ts:
    t.start()
go.set()
for t in ts:
    t.join()
assert sorted(results) == [2.0, 3.0], results
