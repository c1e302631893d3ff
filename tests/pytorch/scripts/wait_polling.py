"""Correct: request threads poll an Event flag, running the model, while the
main thread sleeps a little and then sets the flag; a second loop polls a
plain flag with time.sleep."""
import threading
import time

import torch

model = torch.nn.Linear(4, 4)
done = threading.Event()
stop = False
counts = [0, 0]


@torch.no_grad()
def poll_event(i):
    while not done.is_set():
        model(torch.ones(1, 4))
        counts[i] += 1


def poll_flag():
    while not stop:
        time.sleep(0.001)


ts = [threading.Thread(target=poll_event, args=(i,)) for i in range(2)] + [threading.Thread(target=poll_flag)]
for t in ts:
    t.start()
time.sleep(0.01)
done.set()
stop = True
for t in ts:
    t.join()
