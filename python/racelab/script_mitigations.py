"""racelab's own mitigations, applied to a user's unedited script (pyrun -m racelab:NAME).

A bare mitigation name is the user's own: it reaches the script as
$RACELAB_MITIGATION and racelab does nothing with it. `racelab:NAME` is one of
racelab's, applied from outside, as python/racelab/mitigations.py applies it to
the built-in workloads: for the run, torch.compile is wrapped, so every
function or module it returns makes its calls through the mitigation, and the
mitigation's process-wide setting (disable_check's config, isolate_thread's
thread-local flag) is on. The script then sees no $RACELAB_MITIGATION (it
runs its own default, usually no fix), so the two can never be confused.

A call through a compiled callable is its thread's first when that thread
never called it before, and may compile when the thread never called it with
these input shapes. What a mitigation cannot do from outside is refused by
name, with the reason (bad input: exit 3), never run as if applied.
"""
import functools
import threading

from . import mitigations

PREFIX = "racelab:"

# racelab's mitigations that it applies to a script, and those it cannot (yet).
APPLIED = ("lock_first_call", "global_lock", "rw_lock", "isolate_thread", "disable_check")
NOT_APPLIED = {
    "precompile": "it needs each compiled callable's input shapes before the threads start (not recorded yet)",
    "isolate_process": "a script's threads share its objects; moving each to a process changes the program",
    "module_shim": "the seed's sys.modules shim is the script's own code to add",
    "patch_check": "the seed's patched check is the script's own code to add",
}


class Refused(ValueError):
    """A racelab: mitigation that cannot be applied to a script: bad input."""


def racelab_name(mitigation):
    """NAME for "racelab:NAME", else None (the user's own name)."""
    return mitigation[len(PREFIX):] if mitigation.startswith(PREFIX) else None


def check(name):
    if name in APPLIED:
        return
    if name in NOT_APPLIED:
        raise Refused(f"mitigation racelab:{name} is not applied to a script: {NOT_APPLIED[name]}; "
                      f"racelab applies {', '.join(PREFIX + n for n in APPLIED)}")
    raise Refused(f"mitigation racelab:{name}: no such mitigation; racelab applies "
                  f"{', '.join(PREFIX + n for n in APPLIED)} (a bare name is your own: $RACELAB_MITIGATION)")


def _shapes(args, kwargs):
    import torch
    out = []
    for v in list(args) + list(kwargs.values()):
        out.append(tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__)
    return tuple(out)


def _through(m, fn):
    """fn's calls, made through mitigation m."""
    seen = threading.local()  # this thread's calls: the input shapes it called with

    def call(*args, **kwargs):
        shapes = getattr(seen, "shapes", None)
        first = shapes is None
        if first:
            shapes = seen.shapes = set()
        key = _shapes(args, kwargs)
        compiles = key not in shapes
        shapes.add(key)
        return m.around(lambda: fn(*args, **kwargs), first, compiles)

    return call


class Applied:
    """with Applied(name): the script's run under racelab's mitigation `name`."""

    def __init__(self, name):
        check(name)
        self.m = mitigations.make(name)

    def __enter__(self):
        import torch
        self.torch = torch
        self.real_compile = torch.compile
        m, real = self.m, self.real_compile

        def wrap(compiled):
            if isinstance(compiled, torch.nn.Module):
                compiled.forward = _through(m, compiled.forward)  # nn.Module.__call__ calls it
                return compiled
            return functools.wraps(compiled)(_through(m, compiled))

        @functools.wraps(real)
        def compile(model=None, **kwargs):
            if model is None:  # @torch.compile(backend=...): a decorator
                return lambda f: wrap(real(f, **kwargs))
            return wrap(real(model, **kwargs))

        torch.compile = compile
        m.begin()
        return self

    def __exit__(self, *exc):
        try:
            self.m.end()
        finally:
            self.torch.compile = self.real_compile
        return False
