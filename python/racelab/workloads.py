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
import sys

import torch

from . import bridge, mitigations, sync, torch_state
from .script import BadScript, ScriptTrial  # noqa: F401 -- the worker names them through this module

_SPEC = json.load(open(os.path.join(os.path.dirname(__file__), "workloads.json")))
WORKLOADS = {w["name"]: w for w in _SPEC["workloads"]}
MITIGATIONS = _SPEC["mitigations"]


class TraceMe(torch.nn.Module):
    """What the user traces: submodules, so module calls go through the
    patcher. `layers` Linear layers (knob, default 1) widen the window in
    which Module.__call__ is patched: each layer is a call the tracer records
    (the point fx.trace.call_module) while the patch is in place."""

    def __init__(self, dim, layers=1):
        super().__init__()
        self.a = torch.nn.Linear(dim, dim)
        self.more = torch.nn.ModuleList(torch.nn.Linear(dim, dim) for _ in range(layers - 1))
        self.b = torch.nn.ReLU()

    def forward(self, x):
        x = self.a(x)
        for layer in self.more:
            x = layer(x)
        return self.b(x) + 1


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


def _cond_call(dim, size):
    """torch.cond's eager path, with gradients: the same shape as
    flex_attention's -- _set_compilation_env (save the FX flag, clear it),
    torch.compile of the operator (dynamo's compile lock), restore -- and its
    autograd key traces the forward and backward graphs with make_fx on every
    call, outside the compile lock. It runs backward on CPU on every torch that
    has it, where flex_attention does not (2.14: "FlexAttention does not
    support backward on CPU")."""
    x = torch.randn(size * 4, dim, requires_grad=True)
    out = torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))
    out.sum().backward()


class NotApplicable(Exception):
    """The workload cannot run on this torch (not a race, not a failure):
    the worker answers bad_input, and racelab says why (exit 3)."""


_HOPS = {"flex_attention": _flex_call, "cond": _cond_call}
_flex_backward_on_cpu = []  # [bool] once asked


def flex_backward_on_cpu(dim):
    """Whether this torch's flex_attention runs backward on CPU (2.6 does,
    2.14 refuses at its input check, before it compiles anything)."""
    if not _flex_backward_on_cpu:
        try:
            _flex_call(dim, 1)
            _flex_backward_on_cpu.append(True)
        except NotImplementedError:
            _flex_backward_on_cpu.append(False)
    return _flex_backward_on_cpu[0]


def hop_of(knobs):
    """The higher-order operator whose eager path the `flex` role calls
    (knob hop): flex_attention, cond, or auto -- flex_attention where this
    torch runs its backward on CPU, else cond. Asked outside any trial's
    control (warm-up, or a spawned worker's set-up)."""
    hop = knobs.get("hop", "flex_attention")
    if hop == "auto":
        return "flex_attention" if flex_backward_on_cpu(knobs["dim"]) else "cond"
    if hop == "flex_attention" and not flex_backward_on_cpu(knobs["dim"]):
        raise NotApplicable(f"not applicable on torch {torch.__version__.split('+')[0]}: its flex_attention has no "
                            f"CPU backward (knob hop: \"cond\" or \"auto\" runs torch.cond's eager path, the same "
                            f"compilation environment)")
    return hop


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

    def _sizes(self):
        return [4 + s for s in range(self.k["shapes"])]

    def _compiled(self, i):
        compiled = self.compiled[i]
        sizes, seen = self._sizes(), set()
        for step in range(self.k["steps"]):
            size = sizes[step % len(sizes)]
            x = torch.randn(size, self.k["dim"])
            y = self.mit.around(lambda: compiled(x), step == 0, size not in seen)
            seen.add(size)
            if not torch.allclose(y, _fn(x)):
                self.wrong.append(f"thread {i}: a compiled result differs from eager")

    def _flex(self, i):
        call = _HOPS[hop_of(self.k)]
        for step in range(self.k["steps"]):
            # An eager flex_attention (or cond) call compiles every time: `compiles` is always true.
            self.mit.around(lambda: call(self.k["dim"], 1 + step % self.k["shapes"]), step == 0, True)

    def _warm_calls(self):
        """Every (compiled function, input size) and flex size of the trial, for precompile."""
        calls = []
        if self.role(1 if self.k["user_trace"] else 0) == self._compiled:
            for c in self.compiled:
                for size in self._sizes():
                    calls.append(lambda c=c, size=size: c(torch.randn(size, self.k["dim"])))
        if self.k["flex"]:
            call = _HOPS[hop_of(self.k)]
            for s in range(self.k["shapes"]):
                calls.append(lambda s=s: call(self.k["dim"], 1 + s))
        return calls

    def _eager_modules(self, i):
        mod = torch.nn.Sequential(torch.nn.Linear(self.k["dim"], self.k["dim"]), torch.nn.Tanh())
        for _ in range(self.k["steps"]):
            # The workload's own point before each eager call: torch's eager
            # module call has none, so without it this thread would run from
            # start to end in one step and never meet another's trace half done.
            if bridge.managed():
                bridge.point(b"workload.eager_module_call")
            mod(torch.randn(2, self.k["dim"]))

    # --- the body on thread 0 ----------------------------------------------
    def run(self):
        torch.manual_seed(self.seed % (2 ** 63))
        self.compiled = [torch.compile(_fresh_fn(), backend="aot_eager") for _ in range(self.threads)]
        self.trace_me = TraceMe(self.k["dim"], self.k.get("layers", 1))
        if self.k["user_trace"]:
            self.ref_graph = str(torch.fx.symbolic_trace(self.trace_me).graph)
        self.mit.warm(self._warm_calls())
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
            "metrics": {"torch": torch_state.version(), **({"hop": hop_of(self.k)} if self.k["flex"] else {})},
        }

    def warm_up(self):
        """Every role once, one after the other, uncontrolled: the lazy imports
        and first-time set-up of torch happen here, not in the first trial, so
        a worker's first trial takes the same steps as its later ones (a replay
        in a fresh worker follows its schedule)."""
        self.compiled = [torch.compile(_fresh_fn(), backend="aot_eager") for _ in range(2)]
        self.trace_me = TraceMe(self.k["dim"], self.k.get("layers", 1))
        self.ref_graph = str(torch.fx.symbolic_trace(self.trace_me).graph)
        if self.k["flex"]:
            hop_of(self.k)  # asks this torch once, uncontrolled; NotApplicable ends here
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
        """isolate_process: each worker alone in a process of its own. A fork
        of this process, except where a worker uses autograd (flex with
        gradients): torch refuses autograd in a child forked after a backward
        pass (the warm-up ran one), so those workers run in a freshly spawned
        interpreter, which pays torch's import per worker."""
        if self.k["flex"]:
            return self._run_spawned()
        reports = mitigations.in_forked_workers(self.threads, lambda i: self.role(i)(i),
                                                lambda: {"wrong": self.wrong, "stuck": torch_state.problems()})
        for got in reports:
            self._gather(got)

    def _run_spawned(self):
        # subprocess, not multiprocessing: multiprocessing reaches into
        # threading.RLock's internals, which racelab.sync replaces.
        import subprocess
        package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        children = []
        for i in range(self.threads):
            spec = json.dumps({"knobs": self.k, "i": i, "threads": self.threads, "seed": self.seed})
            children.append(subprocess.Popen([sys.executable, "-c", _SPAWNED_MAIN, package_dir, spec],
                                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL))
        for p in children:
            out = p.stdout.read().decode(errors="replace")
            p.stdout.close()
            p.wait()
            lines = [ln for ln in out.splitlines() if ln.startswith("@@racelab-result ")]
            self._gather(json.loads(lines[-1][len("@@racelab-result "):]) if lines else
                         {"errors": [f"a worker process died without a word (exit {p.returncode})"]})

    def _gather(self, got):
        self.errors += got.get("errors", [])
        self.wrong += got.get("wrong", [])
        self.errors += [f"worker process: {s}" for s in got.get("stuck", [])]


_SPAWNED_MAIN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from racelab import workloads
spec = json.loads(sys.argv[2])
print("@@racelab-result " + json.dumps(workloads.spawned_role(spec["knobs"], spec["i"], spec["threads"], spec["seed"])))
"""


def spawned_role(knobs, i, threads, seed):
    """isolate_process's worker i in a spawned interpreter (no racelab
    scheduling there): the trial's set-up, then role i alone."""
    torch.set_num_threads(1)
    t = Trial(knobs, "none", threads, seed, None)
    torch.manual_seed(seed % (2 ** 63))
    t.compiled = [torch.compile(_fresh_fn(), backend="aot_eager") for _ in range(threads)]
    t.trace_me = TraceMe(knobs["dim"], knobs.get("layers", 1))
    t.ref_graph = str(torch.fx.symbolic_trace(t.trace_me).graph)
    errors = []
    try:
        t.role(i)(i)
    except BaseException as e:  # noqa: BLE001
        errors.append(f"{type(e).__name__}: {e}")
    return {"errors": errors, "wrong": t.wrong, "stuck": torch_state.problems()}


def _bench_target():
    return None


class PointOverheadTrial:
    """racelab bench's per-point cost of the Python points, in one trial on
    one managed thread: `calls` calls of an empty function, timed three ways
    in the same process --
      plain   no point on it (sys.monitoring has no events on its code);
      point   a point placed at its start as torch's are (points.Monitor:
              the monitoring callback, the hit count, the bridge into the
              engine, a scheduling decision under the cell's strategy);
      bridge  racelab.bridge.point() called directly (no monitoring).
    The ratios point/plain and bridge/plain are what a point costs against a
    plain Python call; the strategy (random: controlled; os: free running)
    is the cell's."""

    def __init__(self, knobs, mitigation, threads, seed, monitor):
        self.calls, self.monitor = int(knobs["calls"]), monitor

    def warm_up(self):
        pass

    def _time(self, body):
        clock = sync._real_perf_counter_ns  # real time: under a scheduler, time's clocks are logical
        best = None
        for _ in range(3):  # the best of three: least disturbed by other processes
            t0 = clock()
            body()
            dt = (clock() - t0) / self.calls
            best = dt if best is None else min(best, dt)
        return best

    def run(self):
        n, f, point = self.calls, _bench_target, bridge.point

        def calls():
            for _ in range(n):
                f()

        def bridge_calls():
            for _ in range(n):
                point(b"bench.bridge_point")

        plain = self._time(calls)
        self.monitor.place_start(f.__code__, "bench.point")
        try:
            pointed = self._time(calls)
        finally:
            self.monitor.place_start(f.__code__, None)
        direct = self._time(bridge_calls)
        return {"errors": [], "stuck_state": "", "wrong_result": "", "silent_fallbacks": 0,
                "metrics": {"torch": torch_state.version(), "calls": n, "placement": self.monitor.method,
                            "plain_call_ns": plain, "point_call_ns": pointed, "bridge_point_ns": direct,
                            "point_over_plain": pointed / max(plain, 1e-9),
                            "bridge_over_plain": direct / max(plain, 1e-9)}}


def make_trial(name, knobs, mitigation, threads, seed, monitor):
    kind = WORKLOADS[name].get("kind", "builtin")
    if kind == "dynamo_state":
        from . import dynamo_state
        return dynamo_state.Trial(name, knobs, mitigation, threads, seed, monitor)
    cls = {"script": ScriptTrial, "bench": PointOverheadTrial}.get(kind, Trial)
    return cls(knobs, mitigation, threads, seed, monitor)
