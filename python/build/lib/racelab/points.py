"""Interleaving points in real torch, placed by name.

Each point names a place where a thread switch changes the outcome, and where
to find it: a function (a point at its start) or a line of a function that
contains a given text (a point just before that line runs), with one candidate
per torch version that moved it. Points are found after torch is imported;
those a torch version lacks are reported, never silently dropped.

Placement: sys.monitoring (Python >= 3.12) with events enabled only on the code
objects concerned, so the rest of torch runs at full speed; before 3.12,
sys.settrace with a local tracer only in those code objects (sys.setprofile
sees calls but not lines, and most points here are lines).

Every hit is counted per trial (coverage, and the silent eager fallback:
compiled.eager_fallback is the line where a compiled function runs its
original code because the FX flag is set and error_on_nested_fx_trace is off).
"""
import importlib
import linecache
import sys
import threading

from . import bridge

# (name, [(module, qualified name, line text or None, text of an earlier line it must follow or None)])
# The names are stable: schedules and reports store them.
POINTS = [
    ("fx.trace.enter", [("torch.fx._symbolic_trace", "Tracer.trace", None, None)]),
    ("fx.flag.set", [("torch.fx._symbolic_trace", "Tracer.trace", "_is_fx_tracing_flag = True", None)]),
    ("fx.flag.restore", [("torch.fx._symbolic_trace", "Tracer.trace",
                          "_is_fx_tracing_flag = old_is_fx_tracing_flag", None)]),
    # Each module call the tracer records: inside the window where Module.__call__ is patched.
    ("fx.trace.call_module", [("torch.fx._symbolic_trace", "Tracer.call_module", None, None)]),
    ("fx.patcher.install", [("torch.fx._symbolic_trace", "_new_patcher", "CURRENT_PATCHER = _Patcher()", None)]),
    ("fx.patcher.patch_method", [("torch.fx._symbolic_trace", "_Patcher.patch_method", None, None)]),
    ("fx.patcher.revert", [("torch.fx._symbolic_trace", "_Patcher.revert_all_patches", None, None)]),
    ("compiled.entry_check", [("torch._dynamo.eval_frame", "_TorchDynamoContext.__call__.<locals>._fn",
                               "if is_fx_tracing():", None)]),
    ("compiled.eager_fallback", [("torch._dynamo.eval_frame", "_TorchDynamoContext.__call__.<locals>._fn",
                                  "return fn(*args, **kwargs)", "if is_fx_tracing():")]),
    ("flex.env.clear", [("torch.nn.attention.flex_attention", "_set_compilation_env",
                         "torch.fx._symbolic_trace._is_fx_tracing_flag = False", None)]),
    ("flex.env.restore", [("torch.nn.attention.flex_attention", "_set_compilation_env",
                           "torch.fx._symbolic_trace._is_fx_tracing_flag = _old_is_tracing", None)]),
]
# Locks torch makes at import: racelab.sync's controlled locks, renamed.
LOCKS = [("dynamo.compile_lock", [("torch._dynamo.convert_frame", "compile_lock")])]


def _nested_codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from _nested_codes(c)


def _find_code(module, qualname):
    mod = importlib.import_module(module)
    outer = qualname.split(".<locals>.")[0]
    obj = mod
    for part in outer.split("."):
        obj = getattr(obj, part)
    obj = getattr(obj, "__wrapped__", obj)  # contextlib.contextmanager
    code = obj.__code__
    if ".<locals>." not in qualname:
        return code
    for c in _nested_codes(code):
        if getattr(c, "co_qualname", c.co_name) == qualname or c.co_name == qualname.split(".")[-1]:
            return c
    raise LookupError(f"no nested code {qualname}")


def _find_line(code, text, after):
    lines = sorted({ln for _, _, ln in code.co_lines() if ln is not None})
    seen_after = after is None
    for ln in lines:
        src = linecache.getline(code.co_filename, ln).strip()
        if not seen_after:
            seen_after = src.startswith(after)
            continue
        if src.startswith(text):
            return ln
    raise LookupError(f"no line '{text}'" + (f" after '{after}'" if after else ""))


class Monitor:
    """The placed points of one process and their hit counts."""

    def __init__(self):
        self.starts = {}    # code -> (name, bname)
        self.lines = {}     # (code, line) -> (name, bname)
        self.found, self.missing = {}, {}
        self.hits = {}
        self.method = None
        self._line_codes = set()

    def discover(self):
        for name, candidates in POINTS:
            why = []
            for module, qualname, text, after in candidates:
                try:
                    code = _find_code(module, qualname)
                    if text is None:
                        self.starts[code] = (name, name.encode())
                        self.found[name] = f"{module}.{qualname}"
                    else:
                        ln = _find_line(code, text, after)
                        self.lines[(code, ln)] = (name, name.encode())
                        self._line_codes.add(code)
                        self.found[name] = f"{module}.{qualname}:{ln}"
                    break
                except (ImportError, AttributeError, LookupError) as e:
                    why.append(f"{module}.{qualname}: {type(e).__name__}: {e}")
            else:
                self.missing[name] = "; ".join(why)
        for name, candidates in LOCKS:
            why = []
            for module, attr in candidates:
                try:
                    lock = getattr(importlib.import_module(module), attr)
                    if not hasattr(lock, "rename"):
                        raise LookupError(f"{type(lock).__name__}, not a racelab lock (made before racelab.sync.install)")
                    lock.rename(name)
                    self.found[name] = f"{module}.{attr}"
                    break
                except (ImportError, AttributeError, LookupError) as e:
                    why.append(f"{module}.{attr}: {e}")
            else:
                self.missing[name] = "; ".join(why)

    def _hit(self, name, bname):
        self.hits[name] = self.hits.get(name, 0) + 1
        bridge.point(bname)

    def install(self, method=None):
        """Places the points; method: 'sys.monitoring' (default where available) or 'sys.settrace'."""
        if method is None:
            method = "sys.monitoring" if hasattr(sys, "monitoring") else "sys.settrace"
        self.method = method
        if method == "sys.monitoring":
            self._install_monitoring()
        elif method == "sys.settrace":
            self._install_settrace()
        else:
            raise ValueError(f"unknown point placement '{method}' (expected sys.monitoring or sys.settrace)")

    def place_start(self, code, name):
        """A point at the start of `code` once the points are installed (a
        workload's own function: the point-overhead benchmark); None removes it."""
        if name is None:
            self.starts.pop(code, None)
        else:
            self.starts[code] = (name, name.encode())
        if self.method == "sys.monitoring":
            m = sys.monitoring
            ev = (m.events.PY_START if name is not None else 0) | (m.events.LINE if code in self._line_codes else 0)
            m.set_local_events(self.tool, code, ev)

    def _install_monitoring(self):
        m = sys.monitoring
        tool = next(t for t in range(2, 6) if m.get_tool(t) is None)
        m.use_tool_id(tool, "racelab")
        self.tool = tool
        starts, lines, hit = self.starts, self.lines, self._hit

        def on_start(code, offset):
            p = starts.get(code)
            if p is not None:
                hit(*p)

        def on_line(code, line):
            p = lines.get((code, line))
            if p is None:
                return m.DISABLE
            hit(*p)

        m.register_callback(tool, m.events.PY_START, on_start)
        m.register_callback(tool, m.events.LINE, on_line)
        events = {}
        for code in starts:
            events[code] = events.get(code, 0) | m.events.PY_START
        for code in self._line_codes:
            events[code] = events.get(code, 0) | m.events.LINE
        for code, ev in events.items():
            m.set_local_events(tool, code, ev)

    def _install_settrace(self):
        starts, lines, line_codes, hit = self.starts, self.lines, self._line_codes, self._hit

        def local(frame, event, arg):
            if event == "line":
                p = lines.get((frame.f_code, frame.f_lineno))
                if p is not None:
                    hit(*p)
            return local

        def global_(frame, event, arg):
            code = frame.f_code
            p = starts.get(code)
            if p is not None:
                hit(*p)
            return local if code in line_codes else None

        sys.settrace(global_)
        threading.settrace(global_)

    def report(self):
        return {"method": self.method, "found": dict(sorted(self.found.items())),
                "missing": dict(sorted(self.missing.items()))}


class UserPoints:
    """Points a user asks for (racelab pyrun --points), beside torch's named ones:

      REGEX        a point at the entry of every function whose
                   "module.qualname" matches REGEX in full ('mypkg\\..*|train\\.step');
                   the script's own module is __main__ and also its file's
                   stem (train.py: "train.step")
      lines:REGEX  a point before every line run in a module whose name
                   matches REGEX in full (sys.monitoring LINE events), for code
                   with no named point: the user's own, or torch's
                   torch._dynamo.config

    Each code object or line is looked at once: sys.monitoring disables the
    event where nothing matches, so the rest runs at full speed. Points are
    named "fn:module.qualname" and "line:module:LINE". Needs sys.monitoring
    (Python >= 3.12)."""

    def __init__(self, specs, script_stem=None):
        import re
        self.funcs, self.lines = [], []
        for spec in specs:
            if spec.startswith("lines:"):
                self.lines.append(re.compile(spec[len("lines:"):]))
            else:
                self.funcs.append(re.compile(spec))
        self.script_stem = script_stem
        self.tool = None

    def _module_names(self, frame):
        name = frame.f_globals.get("__name__", "?")
        if name == "__main__" and self.script_stem:
            return (name, self.script_stem)
        return (name,)

    def install(self, hit):
        if not (self.funcs or self.lines):
            return
        if not hasattr(sys, "monitoring"):
            raise ValueError("--points needs Python 3.12 or later (sys.monitoring)")
        m = sys.monitoring
        tool = next(t for t in range(0, 6) if m.get_tool(t) is None)
        m.use_tool_id(tool, "racelab-user-points")
        self.tool = tool
        funcs, lines, names_of = self.funcs, self.lines, self._module_names
        fn_names = {}
        line_modules = {}

        def on_start(code, offset):
            p = fn_names.get(code, False)
            if p is False:
                p = None
                for mod in names_of(sys._getframe(1)):
                    full = f"{mod}.{code.co_qualname}"
                    if any(r.fullmatch(full) for r in funcs):
                        p = "fn:" + full
                        p = (p, p.encode())
                        break
                fn_names[code] = p
            if p is None:
                return m.DISABLE
            hit(*p)

        def on_line(code, line):
            mod = line_modules.get(code, False)
            if mod is False:
                mod = None
                for name in names_of(sys._getframe(1)):
                    if any(r.fullmatch(name) for r in lines):
                        mod = name
                        break
                line_modules[code] = mod
            if mod is None:
                return m.DISABLE
            name = f"line:{mod}:{line}"
            hit(name, name.encode())

        events = 0
        if funcs:
            m.register_callback(tool, m.events.PY_START, on_start)
            events |= m.events.PY_START
        if lines:
            m.register_callback(tool, m.events.LINE, on_line)
            events |= m.events.LINE
        m.set_events(tool, events)

    def uninstall(self):
        if self.tool is None:
            return
        m = sys.monitoring
        m.set_events(self.tool, 0)
        m.register_callback(self.tool, m.events.PY_START, None)
        m.register_callback(self.tool, m.events.LINE, None)
        m.free_tool_id(self.tool)
        self.tool = None
