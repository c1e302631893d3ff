"""A training script laid out as users lay theirs out: `if __name__ == "__main__":`,
a sibling module (model.py) and its settings read from a data file next to it.

Two threads fine-tune their own copy of the model through one compiled step
function. Correct: each thread compiles and calls only its own function, the
input sizes are warmed first, so nothing traces while another thread runs.

  python train.py [--steps N]
"""
import argparse
import json
import os
import threading

import torch

from model import TinyNet, make_step

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args()
    with open(os.path.join(HERE, "settings.json")) as f:
        settings = json.load(f)
    steps = []
    for seed in range(2):
        torch.manual_seed(seed)
        net = TinyNet(settings["dim"])
        step = make_step(net, settings["lr"])
        step(torch.randn(settings["batch"], settings["dim"]))  # warm: compiles before the threads start
        steps.append(step)
    losses = [[] for _ in steps]

    def train(i):
        for _ in range(args.steps):
            losses[i].append(steps[i](torch.randn(settings["batch"], settings["dim"])))

    threads = [threading.Thread(target=train, args=(i,)) for i in range(len(steps))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(len(x) == args.steps for x in losses), losses


if __name__ == "__main__":
    main()
