"""Correct: two request threads serve under one lock until an exporter thread,
which takes the same lock for its own work, tells them to stop. Natively the
OS gives the exporter a core within a time slice; under a scheduler that
keeps running the request threads (PCT's priorities) it must get its turn
too, or the run would only end at the step limit."""
import threading

import torch

model = torch.nn.Linear(4, 4)
lock = threading.Lock()
stop = threading.Event()
served = [0, 0]


@torch.no_grad()
def serve(i):
    while not stop.is_set():
        with lock:
            model(torch.ones(1, 4))
        served[i] += 1


def export():
    with lock:
        state = {k: v.clone() for k, v in model.state_dict().items()}
    assert set(state) == {"weight", "bias"}
    stop.set()


threads = [threading.Thread(target=serve, args=(i,)) for i in range(2)] + [threading.Thread(target=export)]
for t in threads:
    t.start()
for t in threads:
    t.join()
