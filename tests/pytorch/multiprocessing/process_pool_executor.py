"""Correct: CPU-bound feature extraction in a ProcessPoolExecutor, the model in the main thread."""
import concurrent.futures as cf

import torch

model = torch.compile(lambda x: x.mean(), backend="eager")


def features(n):
    return [float(n * k) for k in range(4)]


if __name__ == "__main__":
    with cf.ProcessPoolExecutor(max_workers=2) as pool:
        futures = {pool.submit(features, n): n for n in range(3)}
        got = {}
        for f in cf.as_completed(futures, timeout=60):
            got[futures[f]] = float(model(torch.tensor(f.result(timeout=60))))
    assert got == {0: 0.0, 1: 1.5, 2: 3.0}, got
