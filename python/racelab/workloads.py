"""The catalogue's races on real torch (names and knobs: workloads.json).

One trial body, shaped by knobs, runs on managed thread 0:
  - it makes a torch.compile(fn, backend="aot_eager") function per worker,
    each with its own code object, so each worker compiles for itself (a fresh
    dynamo state per trial: the worker calls torch_state.reset() first) and,
    with user_trace, a reference FX graph of a small module traced alone;
  - it starts `threads` workers (racelab Threads: managed, so the strategy
    decides their interleaving at the points in torch); with user_trace, worker
    0 traces the module with torch.fx.symbolic_trace `steps` times and the
    others, `steps` times each, make a compiled call (cycling through `shapes`
    input sizes, so a new size recompiles), an eager flex_attention call with
    gradients (flex), or an eager module call (eager_modules);
  - it joins them and reads the oracles: exceptions (error), the FX flag, the
    Module patch or the patcher left behind (stuck_state), a traced graph that
    differs from the reference or a compiled result that differs from eager
    (wrong_result), compiled calls that ran their original code because the
    flag was set (silent_fallback, counted at the point compiled.eager_fallback).
"""
import json
import os

import torch

from . import bridge, mitigations, torch_state

_SPEC = json.load(open(os.path.join(os.path.dirname(__file__), "workloads.json")))
WORKLOADS = {w["name"]: w for w in _SPEC["workloads"]}
MITIGATIONS = _SPEC["mitigations"]


class TraceMe(torch.nn.Module):
    """What the user traces: two submodules, so module calls go through the patcher."""

    def __init__(self, dim):
        super().__init__()
        self.a = torch.nn.Linear(dim, dim)
        self.b = torch.nn.ReLU()

    def forward(self, x):
        return self.b(self.a(x)) + 1


_FN_SOURCE = "def fn(x):\n    return torch.sin(x) * 2 + x.cos()\n"


def _fresh_fn():
    """The function each worker compiles, with a code object of its own: dynamo
    caches per code object, so each worker compiles (and traces) for itself."""
    scope = {"torch": torch}
    exec(compile(_FN_SOURCE, "<racelab-compiled-fn>", "exec"), scope)
    return scope["fn"]


_fn = _fresh_fn()  # the eager reference


def _flex_call(dim, size):
    from torch.nn.attention.flex_attention import flex_attention
    q, k, v = (torch.randn(1, 1, size * 4, dim, requires_grad=True) for _ in range(3))
    out = flex_attention(q, k, v)
    out.sum().backward()


class Trial:
    def __init__(self, knobs, mitigation, threads, seed, monitor):
        self.k = knobs
        self.threads = threads
        self.seed = seed
        self.mit = mitigations.make(mitigation)
        self.monitor = monitor
        self.errors, self.wrong = [], []

    # --- one worker's part -------------------------------------------------
    def role(self, i):
        k = self.k
        if k["user_trace"] and i == 0:
            return self._trace
        if k["flex"]:
            return self._flex
        if k["eager_modules"]:
            return self._eager_modules
        return self._compiled

    def _trace(self, i):
        for _ in range(self.k["steps"]):
            g = torch.fx.symbolic_trace(self.trace_me)
            if str(g.graph) != self.ref_graph:
                self.wrong.append(f"thread {i}: the FX graph of a module traced under concurrency differs from "
                                  f"the same module traced alone")

    def _compiled(self, i):
        compiled = self.compiled[i]
        sizes = [4 + s for s in range(self.k["shapes"])]
        for step in range(self.k["steps"]):
            x = torch.randn(sizes[step % len(sizes)], self.k["dim"])
            y = self.mit.around(step == 0, lambda: compiled(x))
            if not torch.allclose(y, _fn(x)):
                self.wrong.append(f"thread {i}: a compiled result differs from eager")

    def _flex(self, i):
        for step in range(self.k["steps"]):
            self.mit.around(step == 0, lambda: _flex_call(self.k["dim"], 1 + step % self.k["shapes"]))

    def _eager_modules(self, i):
        mod = torch.nn.Sequential(torch.nn.Linear(self.k["dim"], self.k["dim"]), torch.nn.Tanh())
        for _ in range(self.k["steps"]):
            mod(torch.randn(2, self.k["dim"]))

    # --- the body on thread 0 ----------------------------------------------
    def run(self):
        torch.manual_seed(self.seed % (2 ** 63))
        self.compiled = [torch.compile(_fresh_fn(), backend="aot_eager") for _ in range(self.threads)]
        self.trace_me = TraceMe(self.k["dim"])
        if self.k["user_trace"]:
            self.ref_graph = str(torch.fx.symbolic_trace(self.trace_me).graph)
        fallbacks_before = self.monitor.hits.get("compiled.eager_fallback", 0)
        self.mit.begin()
        try:
            if self.mit.name == "isolate_process":
                self._run_processes()
            else:
                self._run_threads()
        finally:
            self.mit.end()
        stuck = torch_state.problems()
        return {
            "errors": self.errors,
            "stuck_state": "; ".join(stuck) + (" after every thread joined" if stuck else ""),
            "wrong_result": self.wrong[0] if self.wrong else "",
            "silent_fallbacks": self.monitor.hits.get("compiled.eager_fallback", 0) - fallbacks_before,
            "metrics": {"torch": torch_state.version()},
        }

    def warm_up(self):
        """Every role once, one after the other, uncontrolled: the lazy imports
        and first-time set-up of torch happen here, not in the first trial, so
        a worker's first trial takes the same steps as its later ones (a replay
        in a fresh worker follows its schedule)."""
        self.compiled = [torch.compile(_fresh_fn(), backend="aot_eager") for _ in range(2)]
        self.trace_me = TraceMe(self.k["dim"])
        self.ref_graph = str(torch.fx.symbolic_trace(self.trace_me).graph)
        saved, self.threads = self.threads, 2
        for i in range(2):
            self.role(i)(i)
        self.threads = saved

    def _run_threads(self):
        ts = []
        for i in range(self.threads):
            role = self.role(i)
            ts.append(bridge.Thread(target=role, args=(i,), errors=self.errors, name=f"racelab-{i}"))
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.errors[:] = [f"{e}" for e in self.errors]

    def _run_processes(self):
        """isolate_process: each worker in a fork of this process, alone in it."""
        children = []
        for i in range(self.threads):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                bridge.forget_after_fork()
                errors = []
                try:
                    self.role(i)(i)
                except BaseException as e:  # noqa: BLE001
                    errors.append(f"{type(e).__name__}: {e}")
                out = {"errors": errors, "wrong": self.wrong, "stuck": torch_state.problems()}
                os.write(w, json.dumps(out).encode())
                os._exit(0)
            os.close(w)
            children.append((pid, r))
        for pid, r in children:
            data = b""
            while chunk := os.read(r, 65536):
                data += chunk
            os.close(r)
            os.waitpid(pid, 0)
            got = json.loads(data or b'{"errors": ["a worker process died without a word"]}')
            self.errors += got.get("errors", [])
            self.wrong += got.get("wrong", [])
            self.errors += [f"worker process: {s}" for s in got.get("stuck", [])]
