"""Three drafter threads, each training a small block-attention model.

Each drafter is its own model and optimizer; all three call one compiled
flex_attention (torch.compile(flex_attention, backend="aot_eager")) with a
block-causal mask whose mask_mod reads the module constant B. Sequence
lengths alternate between two sizes, so the compiled function meets a new
shape while the other drafters train.

  python train_drafters.py [--fix none|lock_all|warm_every_shape] [--steps N]

The fix defaults to $RACELAB_MITIGATION (none when unset):
  none              as written
  lock_all          one lock around every training step
  warm_every_shape  one training step per sequence length before the drafters start
"""
import argparse
import os
import threading

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

B = 16  # attention block size; block_causal reads it
DIM = 16
SEQ_LENS = (32, 64)
FIXES = ("none", "lock_all", "warm_every_shape")


def block_causal(b, h, q_idx, kv_idx):
    return (q_idx // B) >= (kv_idx // B)


attend = torch.compile(flex_attention, backend="aot_eager")
masks = {s: create_block_mask(block_causal, 1, 1, s, s, device="cpu") for s in SEQ_LENS}


class Drafter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.out = torch.nn.Linear(DIM, DIM)

    def forward(self, x):
        q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
        y = attend(q, k, v, block_mask=masks[x.shape[1]])
        return self.out(y.squeeze(1))


def train_step(model, opt, seq):
    loss = model(torch.randn(1, seq, DIM)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def drafter(i, steps, fix, lock):
    torch.manual_seed(i)
    model = Drafter()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        seq = SEQ_LENS[(i + step) % len(SEQ_LENS)]
        if fix == "lock_all":
            with lock:
                train_step(model, opt, seq)
        else:
            train_step(model, opt, seq)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fix", default=os.environ.get("RACELAB_MITIGATION") or "none", choices=FIXES)
    p.add_argument("--steps", type=int, default=2)
    args = p.parse_args()
    if args.fix == "warm_every_shape":
        model = Drafter()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for seq in SEQ_LENS:
            train_step(model, opt, seq)
    lock = threading.Lock()
    threads = [threading.Thread(target=drafter, args=(i, args.steps, args.fix, lock), name=f"drafter-{i}")
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
