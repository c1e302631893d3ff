"""Correct: a pipeline over queue.Queue and queue.SimpleQueue with a sentinel."""
import queue
import threading

import torch

jobs, done = queue.Queue(maxsize=1), queue.SimpleQueue()


def stage():
    while True:
        x = jobs.get()
        if x is None:
            done.put(None)
            return
        done.put(x * 2)
        jobs.task_done()


t = threading.Thread(target=stage)
t.start()
for i in range(3):
    jobs.put(torch.tensor(float(i)))
jobs.put(None)
out = []
while (y := done.get()) is not None:
    out.append(float(y))
t.join()
assert out == [0.0, 2.0, 4.0], out
