"""Correct: a multiprocessing pool (spawn context) squares numbers while torch is loaded."""
import multiprocessing as mp

import torch


def square(x):
    return x * x


if __name__ == "__main__":
    torch.ones(1)
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        assert pool.map(square, range(4)) == [0, 1, 4, 9]
