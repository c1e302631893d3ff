"""Races in torch._dynamo's process-wide Python state, on real torch (names and
knobs: workloads.json; model twins: scenarios/register/dynamo_state_workloads.cpp).

  torch_config_patch      every thread calls a function decorated with ONE
                          torch._dynamo.config.patch(...) object (#111150,
                          #118260). torch 2.6 keeps the patch's saved values
                          in one dict and the config in one process-wide
                          value: `assert not prior`, a call that runs with the
                          config unpatched, or the config left patched. 2.14
                          keeps both in ContextVars: each thread its own.
  torch_config_thread_local  the main thread sets a dynamo config value, then
                          starts the workers (#173568): where the config is
                          per thread (2.14's ContextVars) they read the default.
  torch_traceback_meta    every thread reads its own FX node's metadata under
                          preserve_node_meta() / set_current_meta(node)
                          (#184917): both are module globals, so it can read
                          another thread's, or they are left set.
  torch_compile_stampede  every thread calls one compiled function with one
                          input it has not seen: dynamo looks its cache up
                          before the compile lock and not again under it
                          (#123177), so each thread may compile the frame.
  torch_compiler_stance   even threads run a debug call under
                          torch.compiler.set_stance("force_eager"), odd
                          threads call a compiled function: the stance is one
                          process-wide value, so theirs run eagerly.

Each Trial places its own points (points.Monitor.place_start, sys.monitoring)
at the starts of the torch functions whose interleaving matters, only for its
run: the other workloads' schedules see none of them.
"""
import os
import threading

import torch

from . import bridge, mitigations, torch_state

# The config key patched: present in every torch here, read by nothing the
# trial runs (so patching it changes no compile), default False.
CONFIG_KEY = "verbose"


def _config_patch_codes():
    """The code objects of ConfigPatch.__enter__/__exit__ (a class made inside
    ConfigModule.patch) and of ConfigModule.__setattr__."""
    from torch.utils import _config_module as cm
    found = {}

    def walk(code):
        for c in code.co_consts:
            if hasattr(c, "co_code"):
                q = getattr(c, "co_qualname", c.co_name)
                if q.endswith("ConfigPatch.__enter__"):
                    found["config.patch.enter"] = c
                elif q.endswith("ConfigPatch.__exit__"):
                    found["config.patch.exit"] = c
                walk(c)

    walk(cm.ConfigModule.patch.__code__)
    found["config.patch.set"] = cm.ConfigModule.__setattr__.__code__
    return found


def _stance_codes():
    from torch._dynamo import eval_frame as ef
    return {"stance.set": ef._set_stance.__code__, "compiled.stance_check": ef._callback_from_stance.__code__}


def _naming_asserts(role):
    """A bare `assert` in torch raises an AssertionError with no message; the
    failing line is what says which (`assert not prior`), so it joins it."""
    def wrapped(i):
        try:
            role(i)
        except AssertionError as e:
            if str(e):
                raise
            import traceback
            last = traceback.extract_tb(e.__traceback__)[-1]
            raise AssertionError(f"{last.line} ({os.path.basename(last.filename)}:{last.lineno})") from None
    return wrapped


class _Counting:
    """A torch.compile backend that counts its compiles and, per thread, the
    calls that ran compiled (a call that ran eagerly does not pass here)."""

    def __init__(self):
        self.compiles = 0
        self.tls = threading.local()

    def __call__(self, gm, example_inputs):
        self.compiles += 1
        forward = gm.forward

        def run(*args):
            self.tls.compiled = getattr(self.tls, "compiled", 0) + 1
            return forward(*args)
        return run

    def compiled_calls(self):
        return getattr(self.tls, "compiled", 0)


_FN_SOURCE = "def fn(x):\n    return torch.sin(x) * 2 + x.cos()\n"


def _fresh_fn():
    scope = {"torch": torch}
    exec(compile(_FN_SOURCE, "<racelab-dynamo-state-fn>", "exec"), scope)
    return scope["fn"]


class Trial:
    """One trial of a dynamo-state workload; its `kind` picks the body."""

    def __init__(self, name, knobs, mitigation, threads, seed, monitor):
        self.name, self.k, self.mit, self.threads, self.seed = name, knobs, mitigation, threads, seed
        self.monitor = monitor
        self.errors, self.wrong = [], []
        self.fallbacks = 0
        self.eager_calls = []  # list.append is atomic under the GIL
        self.lock = threading.Lock()  # racelab.sync's, when installed
        self.metrics = {}

    # --- shared plumbing ------------------------------------------------------
    def _with_points(self, codes, body):
        placed = []
        if self.monitor is not None and getattr(self.monitor, "method", None) == "sys.monitoring":
            for name, code in codes.items():
                self.monitor.place_start(code, name)
                placed.append(code)
        try:
            return body()
        finally:
            for code in placed:
                self.monitor.place_start(code, None)

    def _run(self, role):
        role = _naming_asserts(role)
        if self.mit == "isolate_process":
            return self._run_processes(role)
        ts = [bridge.Thread(target=role, args=(i,), errors=self.errors, name=f"racelab-{i}")
              for i in range(self.threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    def _run_processes(self, role):
        # What the parent already has at the fork (the user's own setting,
        # torch_config_thread_local) is not a worker's leftover.
        inherited = set(torch_state.problems())

        def observe():
            return {"wrong": self.wrong, "fallbacks": self.fallbacks,
                    "stuck": [p for p in torch_state.problems() if p not in inherited]}

        for got in mitigations.in_forked_workers(self.threads, role, observe):
            self.errors += got.get("errors", [])
            self.wrong += got.get("wrong", [])
            self.fallbacks += got.get("fallbacks", 0)
            self.errors += [f"worker process: {s}" for s in got.get("stuck", [])]

    def _locked(self, call):
        if self.mit == "global_lock":
            with self.lock:
                return call()
        return call()

    # --- torch_config_patch ---------------------------------------------------
    def _config_patch(self):
        cfg = torch._dynamo.config
        shared = cfg.patch(**{CONFIG_KEY: True})  # the one decorator object every thread uses

        def body(i):
            if bridge.managed():
                bridge.point(b"workload.config_read")
            if getattr(cfg, CONFIG_KEY) is not True:
                self.wrong.append(f"thread {i}: its patched call ran with torch._dynamo.config.{CONFIG_KEY} "
                                  f"unpatched (another thread's exit restored it)")

        shared_body = shared(body)

        def role(i):
            for _ in range(self.k["steps"]):
                if self.mit == "per_call_patch":
                    with cfg.patch(**{CONFIG_KEY: True}):
                        body(i)
                else:
                    self._locked(lambda: shared_body(i))

        self._with_points(_config_patch_codes(), lambda: self._run(role))

    # --- torch_config_thread_local -------------------------------------------
    def _config_thread_local(self):
        import contextvars
        cfg = torch._dynamo.config
        default = getattr(cfg, CONFIG_KEY)
        setattr(cfg, CONFIG_KEY, True)  # the user's setting, on the main thread, before the workers start
        # copy_context: each worker runs in a copy of this thread's context, made here.
        contexts = [contextvars.copy_context() for _ in range(self.threads)]

        def read(i):
            for _ in range(self.k["steps"]):
                if self.mit == "set_in_each_thread":
                    setattr(cfg, CONFIG_KEY, True)
                if bridge.managed():
                    bridge.point(b"workload.config_read")
                if getattr(cfg, CONFIG_KEY) is not True:
                    self.wrong.append(f"thread {i}: it ran with torch._dynamo.config.{CONFIG_KEY} at its default, not "
                                      f"the value the main thread set before it started (the config is per thread)")

        def role(i):
            if self.mit == "copy_context":
                return contexts[i].run(read, i)
            return read(i)

        try:
            self._run(role)
        finally:
            setattr(cfg, CONFIG_KEY, default)

    # --- torch_traceback_meta -------------------------------------------------
    def _traceback_meta(self):
        import torch.fx.traceback as fxt
        # One node per thread, its metadata naming the thread.
        nodes = []
        for i in range(self.threads):
            g = torch.fx.Graph()
            n = g.placeholder(f"x{i}")
            n.meta["stack_trace"] = f"racelab thread {i}"
            nodes.append(n)

        def role(i):
            for _ in range(self.k["steps"]):
                def body():
                    with fxt.preserve_node_meta():
                        with fxt.set_current_meta(nodes[i]):
                            if bridge.managed():
                                bridge.point(b"workload.meta_read")
                            got = fxt.get_current_meta().get("stack_trace")
                            if got != f"racelab thread {i}":
                                self.wrong.append(f"thread {i}: the node metadata it read was {got!r}, not its own "
                                                  f"(torch.fx.traceback.current_meta is module-global)")
                self._locked(body)

        codes = {"fx.meta.preserve": fxt.preserve_node_meta.__wrapped__.__code__,
                 "fx.meta.set_current": fxt.set_current_meta.__wrapped__.__code__,
                 "fx.meta.get_current": fxt.get_current_meta.__code__}
        self._with_points(codes, lambda: self._run(role))

    # --- torch_compile_stampede -----------------------------------------------
    def _compile_stampede(self):
        backend = _Counting()
        compiled = torch.compile(_fresh_fn(), backend=backend)
        x = torch.randn(4, self.k["dim"])
        if self.mit == "precompile":
            compiled(x)

        def role(i):
            for _ in range(self.k["steps"]):
                y = self._locked(lambda: compiled(x))
                if not torch.allclose(y, torch.sin(x) * 2 + x.cos()):
                    self.wrong.append(f"thread {i}: a compiled result differs from eager")

        self._run(role)
        compiles = backend.compiles if self.mit != "isolate_process" else 0  # a child's compiles stay in it
        self.metrics["compiles"] = compiles
        if compiles > 1:
            self.wrong.append(f"one function and one input shape compiled {compiles} times (dynamo looked its cache "
                              f"up outside the compile lock and not again under it)")

    # --- torch_compiler_stance ------------------------------------------------
    def _compiler_stance(self):
        backend = _Counting()
        compiled = torch.compile(_fresh_fn(), backend=backend)
        x = torch.randn(4, self.k["dim"])
        compiled(x)  # warm: the calls under test are cache hits

        def role(i):
            for _ in range(self.k["steps"]):
                if i % 2 == 0:
                    if self.mit == "orig_callable":
                        compiled._torchdynamo_orig_callable(x)  # the debug call, eager, no stance
                    else:
                        def debug():
                            with torch.compiler.set_stance("force_eager"):
                                compiled(x)
                        self._locked(debug)
                else:
                    before = backend.compiled_calls()
                    self._locked(lambda: compiled(x))
                    if backend.compiled_calls() == before:
                        self.eager_calls.append(i)  # ran eagerly: another thread's stance

        self._with_points(_stance_codes(), lambda: self._run(role))

    # --- the trial ------------------------------------------------------------
    def run(self):
        torch.manual_seed(self.seed % (2 ** 63))
        body = {"torch_config_patch": self._config_patch, "torch_config_thread_local": self._config_thread_local,
                "torch_traceback_meta": self._traceback_meta, "torch_compile_stampede": self._compile_stampede,
                "torch_compiler_stance": self._compiler_stance}[self.name]
        body()
        self.fallbacks += len(self.eager_calls)
        self.errors[:] = [f"{e}" for e in self.errors]
        stuck = torch_state.problems()
        if self.name == "torch_traceback_meta":
            stuck += torch_state.traceback_problems()
        return {
            "errors": self.errors,
            "stuck_state": "; ".join(stuck) + (" after every thread joined" if stuck else ""),
            "wrong_result": self.wrong[0] if self.wrong else "",
            "silent_fallbacks": self.fallbacks,
            "metrics": {"torch": torch_state.version(), **self.metrics},
        }

    def warm_up(self):
        """Each torch call the body makes, once, uncontrolled, on this thread:
        torch's lazy imports and first-time set-up happen here, not in the
        first trial."""
        with torch._dynamo.config.patch(**{CONFIG_KEY: True}):
            pass
        compiled = torch.compile(_fresh_fn(), backend=_Counting())
        x = torch.randn(4, self.k["dim"])
        compiled(x)
        if self.name == "torch_compiler_stance":
            with torch.compiler.set_stance("force_eager"):
                compiled(x)
            compiled._torchdynamo_orig_callable(x)
