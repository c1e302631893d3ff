"""A script that leans on being __main__, as `python main_module.py` makes it:
__name__, __file__, __spec__, sys.path[0], sys.modules['__main__'], a sibling
module, argparse, a data file relative to the working directory and one
relative to __file__, and torch.compile'd code that reads a module constant
through a method of a class defined here (dynamo resolves its module through
sys.modules['__main__']). Exits non-zero naming what was wrong."""
import argparse
import os
import sys
import threading

import torch

import main_module_helper  # a sibling module, found through sys.path[0]

SCALE = 3  # read by the compiled method below


class Net(torch.nn.Module):
    def forward(self, x):
        return x * SCALE + main_module_helper.OFFSET


def check(cond, what):
    if not cond:
        sys.exit(f"not as `python main_module.py` has it: {what}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--times", type=int, default=1)
    args = p.parse_args()
    check(__name__ == "__main__", f"__name__ is {__name__!r}")
    check(__spec__ is None, f"__spec__ is {__spec__!r}")
    check(os.path.isabs(__file__) and os.path.basename(__file__) == "main_module.py", f"__file__ is {__file__!r}")
    here = os.path.dirname(os.path.realpath(__file__))
    check(sys.path[0] == here, f"sys.path[0] is {sys.path[0]!r}, expected {here!r}")
    check("" not in sys.path, "'' (the working directory) is on sys.path")
    check(sys.modules["__main__"].__dict__ is globals(), "sys.modules['__main__'] is not this script's module")
    check(not hasattr(sys.modules["__main__"], "libs"), "the worker's own __main__ is visible")
    check(sys.argv[0].endswith("main_module.py") and sys.argv[1:3] == ["--data", args.data], f"sys.argv is {sys.argv!r}")
    with open(args.data) as f:  # relative to the working directory
        check(f.read().strip() == "racelab data", "the data file (relative to the working directory) differs")
    with open(os.path.join(here, "data", "numbers.txt")) as f:  # relative to __file__
        check(f.read().split() == ["1", "2", "3"], "the data file next to the script differs")
    check(main_module_helper.calls() == 1, "the sibling module was not imported afresh")
    compiled = torch.compile(Net(), backend="aot_eager")
    out = []

    def work():
        x = torch.ones(4)
        out.append(compiled(x))

    ts = [threading.Thread(target=work) for _ in range(args.times)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for y in out:
        check(torch.equal(y, torch.ones(4) * 3 + 1), f"the compiled result is {y}")


if __name__ == "__main__":
    main()
