"""What users put around torch.compile, implemented on real torch.

The names are the model's (compile/mitigation/), listed in workloads.json.
Each is a small object the workload asks how to make a call:
  around(call, first, compiles): runs call() under whatever the mitigation
    holds; `first` is the calling thread's first call, `compiles` says the call
    may compile (an input size this thread has not called with yet, or an
    eager flex_attention call, which compiles every time)
  warm(calls): the trial's every (function, input size) call, before the
    threads start, single-threaded
  begin() / end(): process-wide settings for the trial, undone after it
isolate_process is the workload's business (workloads.py): one process per
worker thread, so it needs no lock.
"""
import json
import os
import threading

import torch
import torch.fx._symbolic_trace as _st

from . import bridge


class _None:
    name = "none"

    def begin(self):
        pass

    def end(self):
        pass

    def warm(self, calls):
        pass

    def around(self, call, first, compiles):
        return call()


class _LockFirstCall(_None):
    """A lock around each thread's first compiled call only."""
    name = "lock_first_call"

    def __init__(self):
        self.lock = threading.Lock()  # racelab.sync's, when installed

    def around(self, call, first, compiles):
        if not first:
            return call()
        with self.lock:
            return call()


class _GlobalLock(_None):
    """One lock around every compiled call (and every eager flex_attention call, which compiles)."""
    name = "global_lock"

    def __init__(self):
        self.lock = threading.Lock()

    def around(self, call, first, compiles):
        with self.lock:
            return call()


class _RwLock(_None):
    """A reader-writer lock: a call that may compile takes it exclusively, a
    cache hit shares it with other cache hits. Built on threading.Condition
    (racelab.sync's, so waiting is a scheduling point, never an OS block)."""
    name = "rw_lock"

    def __init__(self):
        self.cond = threading.Condition(threading.Lock())
        self.readers = 0
        self.writer = False

    def around(self, call, first, compiles):
        with self.cond:
            if compiles:
                while self.writer or self.readers:
                    self.cond.wait()
                self.writer = True
            else:
                while self.writer:
                    self.cond.wait()
                self.readers += 1
        try:
            return call()
        finally:
            with self.cond:
                if compiles:
                    self.writer = False
                else:
                    self.readers -= 1
                self.cond.notify_all()


class _Precompile(_None):
    """Every (function, input size) of the trial called once before the
    threads start, then torch._dynamo.config.error_on_recompile = True, so a
    compile during the trial raises instead of tracing under concurrency.
    It cannot warm what traces on every call: a user's FX trace, an eager
    flex_attention call with gradients."""
    name = "precompile"

    def warm(self, calls):
        for c in calls:
            c()

    def begin(self):
        torch._dynamo.config.error_on_recompile = True

    def end(self):
        torch._dynamo.config.error_on_recompile = False


_fx_tls = threading.local()  # isolate_thread's flag, one per thread


# The code isolate_thread gives torch's own functions. They run with the
# globals of the module they are put into, where begin() defines the names.
def _tl_is_fx_tracing():
    return getattr(_racelab_fx_tls, "flag", False)  # noqa: F821


def _tl_compilation_env():
    tls = _racelab_fx_tls  # noqa: F821
    old = getattr(tls, "flag", False)
    tls.flag = False
    try:
        with _racelab_original_compilation_env():  # noqa: F821
            yield
    finally:
        tls.flag = old


class _IsolateThread(_None):
    """The FX tracing flag made thread-local, the upstream root fix.

    Where torch already keeps the flag per thread (no module-global bool
    torch.fx._symbolic_trace._is_fx_tracing_flag), nothing to do. Where it is
    a process-wide bool (torch 2.4 to 2.6), a back-port for the trial's
    duration, undone by end(). Code objects are replaced, not names, so every
    module that imported a function by name gets the change, and the
    originals still run inside (racelab's points sit in their code):
      - is_fx_tracing(), the flag's reader (dynamo's compiled-frame check holds
        this function object), reads a threading.local;
      - Tracer.trace (so make_fx and every subclass) sets the thread's flag
        around the original, which still writes the global: nobody reads the
        global while the back-port is on;
      - _set_compilation_env (flex_attention, cond, scan, ...) clears the
        thread's flag around the original.
    end() puts the global back to what it was at begin(), since only the
    thread-local counted meanwhile. The Module.__call__ patch of an FX trace
    stays process-wide, as it does upstream."""
    name = "isolate_thread"

    def begin(self):
        self.on = isinstance(getattr(_st, "_is_fx_tracing_flag", None), bool)
        if not self.on:
            return
        import contextlib
        import types

        import torch._higher_order_ops.utils as hop
        self.hop = hop
        self.saved_global = _st._is_fx_tracing_flag
        self.saved_reader = _st.is_fx_tracing.__code__
        _st.__dict__["_racelab_fx_tls"] = _fx_tls
        _st.is_fx_tracing.__code__ = _tl_is_fx_tracing.__code__
        self.saved_trace = _st.Tracer.__dict__["trace"]
        original_trace = self.saved_trace

        def trace(tracer, *args, **kwargs):
            old = getattr(_fx_tls, "flag", False)
            _fx_tls.flag = True
            try:
                return original_trace(tracer, *args, **kwargs)
            finally:
                _fx_tls.flag = old

        _st.Tracer.trace = trace
        env = hop._set_compilation_env.__wrapped__
        self.saved_env = env.__code__
        hop.__dict__["_racelab_fx_tls"] = _fx_tls
        hop.__dict__["_racelab_original_compilation_env"] = contextlib.contextmanager(
            types.FunctionType(self.saved_env, hop.__dict__, "_set_compilation_env"))
        env.__code__ = _tl_compilation_env.__code__

    def end(self):
        if not self.on:
            return
        _st.is_fx_tracing.__code__ = self.saved_reader
        _st.Tracer.trace = self.saved_trace
        self.hop._set_compilation_env.__wrapped__.__code__ = self.saved_env
        _st._is_fx_tracing_flag = self.saved_global
        _fx_tls.flag = False


class _DisableCheck(_None):
    """torch._dynamo.config.error_on_nested_fx_trace = False: a compiled call
    that sees the flag runs its original code instead of raising."""
    name = "disable_check"

    def begin(self):
        torch._dynamo.config.error_on_nested_fx_trace = False

    def end(self):
        torch._dynamo.config.error_on_nested_fx_trace = True


class _IsolateProcess(_None):
    name = "isolate_process"


_ALL = {m.name: m for m in (_None, _LockFirstCall, _GlobalLock, _RwLock, _Precompile, _IsolateThread,
                            _DisableCheck, _IsolateProcess)}


def make(name):
    if name not in _ALL:
        raise ValueError(f"mitigation '{name}': not implemented on real torch (have: {', '.join(_ALL)})")
    return _ALL[name]()


def in_forked_workers(n, role, observe):
    """isolate_process by fork: worker i runs role(i) alone in a child forked
    from this process, then reports observe() (a JSON-able dict) with the
    role's exception, if any, added to its "errors". Returns the children's
    reports in worker order; a child that died without a word says so. Not for
    a worker that uses autograd after this process ran a backward pass: torch
    refuses it in a forked child (spawn instead)."""
    children = []
    for i in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            bridge.forget_after_fork()
            errors = []
            try:
                role(i)
            except BaseException as e:  # noqa: BLE001 -- the worker's failure is its observation
                errors.append(f"{type(e).__name__}: {e}")
            out = observe()
            out["errors"] = errors + list(out.get("errors", []))
            os.write(w, json.dumps(out).encode())
            os._exit(0)
        os.close(w)
        children.append((pid, r))
    reports = []
    for pid, r in children:
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        reports.append(json.loads(data or b'{"errors": ["a worker process died without a word"]}'))
    return reports
