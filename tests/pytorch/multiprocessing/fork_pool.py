"""Correct: a fork pool computes statistics while two threads compile and run the model."""
import multiprocessing as mp
import threading

import torch

model = torch.compile(lambda x: x.relu() + 1, backend="eager")


def stats(n):
    return sum(i * i for i in range(n))


def infer(out, i):
    out[i] = float(model(torch.full((2,), float(i))).sum())


if __name__ == "__main__":
    out = {}
    threads = [threading.Thread(target=infer, args=(out, i), name=f"infer-{i}") for i in range(2)]
    for t in threads:
        t.start()
    pool = mp.get_context("fork").Pool(2)
    results = pool.map_async(stats, [10, 20, 30])
    for t in threads:
        t.join()
    print("stats:", results.get(timeout=60))
    pool.close()
    pool.join()
    assert out == {0: 2.0, 1: 4.0}, out
