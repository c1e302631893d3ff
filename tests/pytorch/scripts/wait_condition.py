"""Correct: a consumer waits on a Condition (with and without a timeout) for items a producer adds."""
import threading

import torch

cond = threading.Condition()
items = []
N = 3


def producer():
    for i in range(N):
        with cond:
            items.append(torch.full((2,), float(i)))
            cond.notify()


def consumer(got):
    while len(got) < N:
        with cond:
            while not items:
                cond.wait(timeout=0.5)
            got.append(items.pop(0))


got = []
ts = [threading.Thread(target=consumer, args=(got,)), threading.Thread(target=producer)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert [float(x[0]) for x in got] == [0.0, 1.0, 2.0], got
