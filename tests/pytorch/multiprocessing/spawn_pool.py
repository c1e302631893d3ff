"""Correct: a spawn pool prepares the batches, threads serve them through one compiled model.

The pool's workers are separate processes; the serving threads are the race-prone part."""
import multiprocessing as mp
import threading

import torch

model = torch.compile(lambda x: x * 2, backend="eager")


def tokenize(n):
    return [n, n + 1]


def serve(batch, out, i):
    out[i] = float(model(torch.tensor(batch, dtype=torch.float32)).sum())


def main():
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        batches = pool.map(tokenize, range(2))
        extra = pool.apply_async(tokenize, (10,)).get(timeout=60)
    out = [None, None]
    threads = [threading.Thread(target=serve, args=(b, out, i)) for i, b in enumerate(batches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "serving threads still alive"
    assert out == [2.0, 6.0], out
    assert extra == [10, 11], extra


if __name__ == "__main__":
    main()
