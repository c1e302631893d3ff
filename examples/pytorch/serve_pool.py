"""A ThreadPoolExecutor serving one compiled model.

Requests of two batch sizes arrive; each worker calls the one
torch.compile(model, backend="aot_eager"). The first request of a new batch
size compiles, and a compile traces with FX (AOTAutograd's make_fx), which on
torch 2.4 to 2.x sets one process-wide flag: another worker's compiled call
that checks it meanwhile raises "Detected that you are using FX to
symbolically trace a dynamo-optimized function".

  python serve_pool.py [--fix none|warm_up]   (default: $RACELAB_MITIGATION or none)
  warm_up   call the compiled model once per batch size before serving
"""
import argparse
import os
from concurrent.futures import ThreadPoolExecutor

import torch

BATCH_SIZES = (2, 3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--fix", default=os.environ.get("RACELAB_MITIGATION") or "none", choices=("none", "warm_up"))
    p.add_argument("--requests", type=int, default=6)
    args = p.parse_args()
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 2)).eval()
    serve = torch.compile(model, backend="aot_eager")
    if args.fix == "warm_up":
        with torch.no_grad():
            for b in BATCH_SIZES:
                serve(torch.randn(b, 8))

    @torch.no_grad()
    def answer(i):
        x = torch.randn(BATCH_SIZES[i % len(BATCH_SIZES)], 8)
        return serve(x).shape[0]

    with ThreadPoolExecutor(max_workers=3) as pool:
        sizes = list(pool.map(answer, range(args.requests)))
    assert sizes == [BATCH_SIZES[i % len(BATCH_SIZES)] for i in range(args.requests)], sizes


if __name__ == "__main__":
    main()
