"""What users put around torch.compile, implemented on real torch.

The names are the model's (compile/mitigation/), listed in workloads.json.
Each is a small object the workload asks how to make a compiled call:
  around(first, call): runs call() under whatever the mitigation holds
  begin() / end(): process-wide settings for the trial, undone after it
isolate_process is the workload's business (workloads.py): one process per
worker thread, so it needs no lock.
"""
import threading

import torch


class _None:
    name = "none"

    def begin(self):
        pass

    def end(self):
        pass

    def around(self, first, call):
        return call()


class _LockFirstCall(_None):
    """A lock around each thread's first compiled call only."""
    name = "lock_first_call"

    def __init__(self):
        self.lock = threading.Lock()  # racelab.sync's, when installed

    def around(self, first, call):
        if not first:
            return call()
        with self.lock:
            return call()


class _GlobalLock(_None):
    """One lock around every compiled call (and every eager flex_attention call, which compiles)."""
    name = "global_lock"

    def __init__(self):
        self.lock = threading.Lock()

    def around(self, first, call):
        with self.lock:
            return call()


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


_ALL = {m.name: m for m in (_None, _LockFirstCall, _GlobalLock, _DisableCheck, _IsolateProcess)}


def make(name):
    if name not in _ALL:
        raise ValueError(f"mitigation '{name}': not implemented on real torch (have: {', '.join(_ALL)})")
    return _ALL[name]()
