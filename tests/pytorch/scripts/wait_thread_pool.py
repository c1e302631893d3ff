"""Correct: a ThreadPoolExecutor serving one model, results gathered with result()."""
from concurrent.futures import ThreadPoolExecutor

import torch

model = torch.nn.Linear(4, 2)


@torch.no_grad()
def serve(i):
    return model(torch.ones(1, 4) * i).shape


pool = ThreadPoolExecutor(max_workers=2)
futures = [pool.submit(serve, i) for i in range(4)]
assert all(f.result() == (1, 2) for f in futures)
with ThreadPoolExecutor(max_workers=2) as scoped:
    assert list(scoped.map(serve, range(3))) == [(1, 2)] * 3
# `pool` is never shut down: the interpreter's exit does it.
