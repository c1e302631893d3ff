"""Request threads share one function decorated with torch._dynamo.config.patch.

The decorator is one ConfigPatch object: entering it saves the prior config
values in a dict all its callers share (and asserts that dict is empty), so
two threads inside the decorated function at once fail ("AssertionError" from
torch/utils/_config_module.py) or restore each other's values.

  python config_patch.py [--fix none|lock]     (default: $RACELAB_MITIGATION or none)
  lock   one lock around every call of the decorated function
"""
import argparse
import os
import threading

import torch

model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh())


@torch._dynamo.config.patch(cache_size_limit=16)
def predict(x):
    with torch.no_grad():
        for _ in range(50):
            x = model(x)
    return x


def serve(requests, fix, lock):
    for _ in range(requests):
        x = torch.randn(4, 64)
        if fix == "lock":
            with lock:
                predict(x)
        else:
            predict(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fix", default=os.environ.get("RACELAB_MITIGATION") or "none", choices=("none", "lock"))
    p.add_argument("--threads", type=int, default=3)
    p.add_argument("--requests", type=int, default=4)
    args = p.parse_args()
    lock = threading.Lock()
    threads = [threading.Thread(target=serve, args=(args.requests, args.fix, lock)) for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
