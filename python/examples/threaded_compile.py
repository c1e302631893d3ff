"""An ordinary multi-threaded PyTorch program, for `racelab pyrun` (README: "Your own PyTorch program").

Two workers each compile and run a small model; a third exports one with
torch.fx.symbolic_trace, as a checkpointing or export thread does. On torch
2.4 to 2.x the FX tracing flag and the Module.__call__ patch are process-wide,
so the export can make a worker's compiled call raise "Detected that you are
using FX to symbolically trace a dynamo-optimized function", or leave the
patch behind. The fix is chosen by the first argument or $RACELAB_MITIGATION:

  none         as written
  lock_all     one lock around every compiled call and around the trace
  trace_first  trace once before the workers start, then reuse the graph: NOT
               a fix: the workers' own compiles are FX traces too (AOTAutograd's
               make_fx), so one worker's compile still breaks the other's call
  warm_first   trace once and compile every worker's model for every input
               size before the workers start: under concurrency, nothing traces
"""
import os
import sys
import threading

import torch

fix = (sys.argv[1] if len(sys.argv) > 1 else os.environ.get("RACELAB_MITIGATION", "none"))
if fix not in ("none", "lock_all", "trace_first", "warm_first"):
    sys.exit(f"unknown fix '{fix}' (expected none, lock_all, trace_first or warm_first)")
lock = threading.Lock()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x)) + 1


def guarded(call):
    if fix == "lock_all":
        with lock:
            return call()
    return call()


SIZES = (4, 5)


def compiled_model():
    fn = torch.compile(Net(), backend="aot_eager")
    if fix == "warm_first":
        for size in SIZES:
            fn(torch.randn(size, 8))
    return fn


def worker(fn):
    for size in SIZES + SIZES:
        guarded(lambda: fn(torch.randn(size, 8)))


exported = torch.fx.symbolic_trace(Net()) if fix in ("trace_first", "warm_first") else None
models = [compiled_model() for _ in range(2)] if fix == "warm_first" else [None, None]


def exporter():
    for _ in range(2):
        graph = exported if exported is not None else guarded(lambda: torch.fx.symbolic_trace(Net()))
        assert "fc" in str(graph.graph)


threads = [threading.Thread(target=worker, args=(m if m is not None else compiled_model(),)) for m in models]
threads.append(threading.Thread(target=exporter))
for t in threads:
    t.start()
for t in threads:
    t.join()
