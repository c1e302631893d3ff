"""A user's own script as a trial body (racelab pyrun), run as `python script.py` runs it.

The script is __main__: each run gets a fresh module in sys.modules['__main__']
whose namespace the script runs in, with __file__ (absolute, as Python 3.9+
sets it), __spec__ None, sys.argv = [script, *args] and sys.path[0] the
script's directory (and no '' for the working directory). Nothing of the
worker's own __main__ is visible. This matters beyond the script's own
globals: dynamo's guards resolve a script-defined function's module through
sys.modules['__main__'] (a BlockMask's mask_mod, a method of a class the
script defines), so a script run in a bare dict saw the worker's module there.
Modules the run imported from the script's directory (its siblings) are
dropped after it, so each run imports them afresh, as a new process does.

After the script's main code returns, what the interpreter does at its exit
follows: concurrent.futures' pools are shut down (its atexit hook), every
non-daemon thread is joined, and daemon threads still running are unwound
(their next call into racelab raises TrialAborted; bridge.unwind_leftover).

Exit statuses are those of `python script.py`: SystemExit(0 or None) passes,
SystemExit(N) is "exit status N", SystemExit("text") is exit status 1, an
uncaught exception in the main code is the exception; os._exit(N) ends the
trial at once (the worker answers and exits: the process is not reused).
An exception that escapes any thread is an error too (natively it is printed
and the exit status stays 0, but it is what a race in a thread looks like).

A script that cannot be found or compiled is BadScript: bad input (exit 3),
never a trial's outcome.
"""
import builtins
import contextlib
import hashlib
import importlib.machinery
import os
import re
import sys
import threading
import traceback
import types

from . import bridge, script_mitigations, torch_state


class BadScript(Exception):
    """The script cannot be run at all: missing, unreadable, or not Python."""


class WarmUpStuck(Exception):
    """The native warm-up run did not finish; the message names every thread's stack."""


_compiled = {}  # (path, content hash) -> code


def load(script):
    """(absolute path, code) of `script`; BadScript says why it cannot run."""
    path = os.path.abspath(script)
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise BadScript(f"script '{script}': {e.strerror or e} (the path is as the Python sees it: relative to "
                        f"its working directory {os.getcwd()})") from None
    key = (path, hashlib.sha256(source).hexdigest())
    if key not in _compiled:
        try:
            _compiled[key] = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as e:
            where = f"{script}:{e.lineno}" if getattr(e, "lineno", None) else script
            raise BadScript(f"script {where}: {type(e).__name__}: {getattr(e, 'msg', e)}") from None
    return path, _compiled[key]


def stacks(threads, depth=4):
    """'name: file:line fn <- ...' for each live thread of `threads`, innermost
    frames first, with what it waits on in racelab (bridge.waiting)."""
    frames = sys._current_frames()
    out = []
    for t in threads:
        f = frames.get(t.ident)
        if f is None:
            continue
        where = []
        for fs in reversed(traceback.extract_stack(f)):
            if "/racelab/" in fs.filename.replace(os.sep, "/"):
                continue  # racelab's own frames: the user's and torch's matter
            where.append(f"{os.path.basename(fs.filename)}:{fs.lineno} {fs.name}")
            if len(where) >= depth:
                break
        waits = bridge.waiting.get(t.ident)
        waits = f" (waits on {waits.decode(errors='replace') if isinstance(waits, bytes) else waits})" if waits else ""
        out.append(f"{t.name}{waits}: " + " <- ".join(where or ["(no Python frame)"]))
    return out


def _forget_module_aliases(names):
    """Dynamo keeps a module its guards refer to as a global alias
    (__import___main__, __import_pkg_dot_mod) in the globals of the frame it
    compiled -- torch's own modules among them -- and asserts that a later
    compile finds the same module there. A process has one __main__; a worker
    runs a new one per trial, so the aliases of the last run's __main__ and
    dropped sibling modules go with them."""
    aliases = {"__import_" + n.replace(".", "_dot_") for n in names}
    for m in list(sys.modules.values()):
        d = getattr(m, "__dict__", None)
        if isinstance(d, dict):
            for a in aliases:
                if a in d:
                    del d[a]


def _shutdown_pools(new_threads):
    """concurrent.futures' exit hook for the pools this run started: wake each
    worker with None and join it, with the module's shutdown flag up meanwhile
    (a worker whose executor is alive otherwise waits for more work)."""
    cft = sys.modules.get("concurrent.futures.thread")
    if cft is None:
        return
    pool = [(t, q) for t, q in list(cft._threads_queues.items()) if t in new_threads]
    if not pool:
        return
    saved, cft._shutdown = cft._shutdown, True
    try:
        for _, q in pool:
            q.put(None)
        for t, _ in pool:
            t.join()
    finally:
        cft._shutdown = saved


def _mp_snapshot():
    """multiprocessing's finalizers and child processes before a run."""
    util, process = sys.modules.get("multiprocessing.util"), sys.modules.get("multiprocessing.process")
    return (set(util._finalizer_registry) if util else set(), set(process._children) if process else set())


def _mp_exit(before):
    """What the interpreter's exit does for multiprocessing (its atexit hook,
    util._exit_function), for what this run made: the finalizers with an exit
    priority (a pool left open is terminated), daemonic children terminated,
    the others joined. A worker is not reused by a process that has not
    ended: what is still running after that is killed, so no process outlives
    the trial."""
    util, process = sys.modules.get("multiprocessing.util"), sys.modules.get("multiprocessing.process")
    if util is None or process is None:
        return
    finalizers_before, children_before = before
    new_children = [p for p in list(process._children) if p not in children_before]
    new_finalizers = [k for k in list(util._finalizer_registry) if k not in finalizers_before and k[0] is not None]
    if not new_children and not new_finalizers:
        return
    bridge.step_out(b"multiprocessing's exit")  # every wait below is on other processes
    for minimum in (0, None):
        for key in sorted((k for k in new_finalizers if minimum is None or k[0] >= minimum), reverse=True):
            f = util._finalizer_registry.get(key)
            if f is not None:
                try:
                    f()
                except Exception:  # noqa: BLE001 -- as util._run_finalizers: a finalizer's failure is not the run's
                    pass
        if minimum == 0:
            for p in new_children:
                if p.daemon and p._popen is not None and p._popen.poll() is None:
                    p._popen.terminate()
            for p in new_children:
                if p._popen is not None:
                    p.join(60)
    _mp_kill_left(before)


def _mp_kill_left(before):
    """Kills the child processes this run started that are still running
    (a trial abandoned by the engine, or one that would not end)."""
    process = sys.modules.get("multiprocessing.process")
    if process is None:
        return
    for p in [p for p in list(process._children) if p not in before[1]]:
        if p._popen is not None and p._popen.poll() is None:
            p.kill()
            p._popen.wait(5)
        process._children.discard(p)


_user_points = [None, None]  # [specs, points.UserPoints] installed in this process


def _configure_points(specs, script, monitor):
    """The user's --points for this script, installed once per process and
    replaced when another trial asks for others."""
    from . import points
    specs = list(specs or [])
    if _user_points[0] == specs:
        return
    if _user_points[1] is not None:
        _user_points[1].uninstall()
    try:
        up = points.UserPoints(specs, os.path.splitext(os.path.basename(script))[0])
        up.install(monitor._hit)
    except Exception as e:  # noqa: BLE001 -- a bad pattern or an old Python: bad input
        raise BadScript(f"--points {specs}: {e}") from None
    _user_points[:] = [specs, up]


class ScriptTrial:
    """racelab pyrun's trial: the script as __main__ on managed thread 0.
    Every thread it starts is managed (racelab.sync); the torch state oracles
    apply as for the built-in workloads. A bare mitigation name is the
    script's to apply: it reads $RACELAB_MITIGATION; racelab:NAME is
    racelab's, applied around the unedited script (script_mitigations.py)."""

    module = None  # the last run's __main__, kept until the next run (daemon threads may still use it)
    siblings = []  # the modules the last run imported from the script's directory (dropped after it)

    def __init__(self, knobs, mitigation, threads, seed, monitor):
        if script_mitigations.racelab_name(mitigation) is not None:
            try:
                script_mitigations.check(script_mitigations.racelab_name(mitigation))
            except script_mitigations.Refused as e:
                raise BadScript(str(e)) from None
        self.script, self.args = knobs["script"], [str(a) for a in knobs["args"]]
        self.path, self.code = load(self.script)
        self.function = knobs.get("function") or ""
        if self.function:
            self.fn = self._imported_function()
        self.mitigation, self.seed, self.monitor = mitigation, seed, monitor
        self.expect_exit = int(knobs.get("expect_exit", 0))
        self.fail_on_output = knobs.get("fail_on_output") or ""
        if self.fail_on_output:
            try:
                self.fail_re = re.compile(self.fail_on_output)
            except re.error as e:
                raise BadScript(f"fail_on_output {self.fail_on_output!r}: {e}") from None
        _configure_points(knobs.get("points"), self.script, monitor)

    # --- FILE::FUNCTION: the module once, the function per trial --------------
    imported = {}  # (path, code) -> the module, imported once per worker

    def _imported_function(self):
        """The trial's function, from the script imported as a module (named
        for its file, as pytest imports a test file), natively, once per
        worker: its module-level set-up (data, model, warm-up) is paid once.
        BadScript names what cannot be a trial: an import that fails, a name
        that is not there or not callable, a function that needs arguments."""
        key = (self.path, self.code)
        mod = ScriptTrial.imported.get(key)
        if mod is None:
            name = os.path.splitext(os.path.basename(self.path))[0]
            here = os.path.dirname(os.path.realpath(self.path))
            mod = types.ModuleType(name)
            mod.__dict__.update(__file__=self.path, __builtins__=builtins,
                                __loader__=importlib.machinery.SourceFileLoader(name, self.path))
            saved_path = list(sys.path)
            sys.path[:] = [here] + [p for p in saved_path if p not in ("", here)]
            sys.modules[name] = mod
            try:
                exec(self.code, mod.__dict__)
            except BaseException as e:  # noqa: BLE001 -- the module's failure is the user's input
                sys.modules.pop(name, None)
                raise BadScript(f"{self.script}::{self.function}: importing {self.script} failed: "
                                f"{_describe(e)}") from None
            finally:
                sys.path[:] = saved_path
            ScriptTrial.imported[key] = mod
        fn = getattr(mod, self.function, None)
        if fn is None or not callable(fn):
            have = sorted(n for n, v in vars(mod).items() if callable(v) and not n.startswith("_")
                          and getattr(v, "__module__", None) == mod.__name__)
            raise BadScript(f"{self.script}::{self.function}: {self.script} has no function {self.function!r}"
                            f" (it has: {', '.join(have) or 'none'})")
        import inspect
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = []
        needs = [p.name for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                 p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if needs:
            raise BadScript(f"{self.script}::{self.function}: the function needs arguments ({', '.join(needs)}); "
                            f"a trial calls it with none (give them defaults, or wrap it in one that takes none)")
        return fn

    # --- one run of the script as `python script.py` -------------------------
    def _exec(self, errors, mitigation, on_main_done=None):
        """Runs the script as __main__ and what the interpreter's exit does
        after it; appends what failed to `errors`. Returns the exit status
        `python script.py` would have had."""
        saved_argv, saved_path = sys.argv, list(sys.path)
        saved_env = {k: os.environ.get(k) for k in ("RACELAB_MITIGATION", "RACELAB_SEED")}
        here = os.path.dirname(os.path.realpath(self.path))
        sys.argv = [self.script] + self.args
        sys.path[:] = [here] + [p for p in saved_path if p not in ("", here)]
        ours = script_mitigations.racelab_name(mitigation)
        if ours is None:
            os.environ["RACELAB_MITIGATION"] = mitigation  # the user's own fix: the script applies it
        else:
            os.environ.pop("RACELAB_MITIGATION", None)  # racelab's: applied around the script, unseen by it
        os.environ["RACELAB_SEED"] = str(self.seed)
        if self.function:
            body = self.fn  # the module stays imported: its set-up is the worker's, once
        else:
            _forget_module_aliases(["__main__"] + ScriptTrial.siblings)
            mod = types.ModuleType("__main__")
            mod.__dict__.update(__file__=self.path, __spec__=None, __package__=None, __cached__=None,
                                __builtins__=builtins,
                                __loader__=importlib.machinery.SourceFileLoader("__main__", self.path))
            ScriptTrial.module = mod
            sys.modules["__main__"] = mod

            def body():
                exec(self.code, mod.__dict__)
        modules_before = set(sys.modules)
        threads_before = set(threading.enumerate())
        mp_before = _mp_snapshot()
        status = 0
        applied = script_mitigations.Applied(ours) if ours is not None else contextlib.nullcontext()
        try:
            try:
                with applied:
                    body()
            except SystemExit as e:
                if e.code is None:
                    status = 0
                elif isinstance(e.code, int):
                    status = e.code & 0xFF
                else:
                    status = 1
                    errors.append(f"SystemExit: {e.code}")
            except bridge.TrialAborted:
                raise
            except BaseException as e:  # noqa: BLE001 -- the script's own failure is an observation
                status = 1
                errors.append(_describe(e))
            new = [t for t in threading.enumerate() if t not in threads_before and t is not threading.current_thread()]
            _shutdown_pools(set(new))
            for t in new:
                if not t.daemon:
                    t.join()
            _mp_exit(mp_before)
            if on_main_done is not None:
                on_main_done([t for t in new if t.is_alive()])
        finally:
            _mp_kill_left(mp_before)
            sys.argv, sys.path[:] = saved_argv, saved_path
            for k, v in saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            ScriptTrial.siblings = []
            for name in (set(sys.modules) - modules_before) if not self.function else ():
                f = getattr(sys.modules.get(name), "__file__", None) or ""
                if f and os.path.realpath(f).startswith(here + os.sep):
                    del sys.modules[name]
                    ScriptTrial.siblings.append(name)
        return status

    # --- the warm-up: one native run -----------------------------------------
    def warm_up(self, limit_s=60.0, on_stuck=None):
        """The script once before its first trial, as `python script.py`
        runs it: real threads, real waits, no scheduler. torch's lazy imports
        and first-time set-up happen here, so a worker's first trial takes the
        steps its later ones take. A warm-up's failure is not a trial's (the
        race may even show here): its errors are dropped and torch's
        process-wide state is put back (torch_state.restore). One that does
        not finish within limit_s (a diagnostic bound, never an outcome: a
        script that cannot finish on its own is bad input, not a hang) calls
        on_stuck(message naming every thread's stack), which does not return."""
        done = threading.Event()

        def watch():
            if done.wait(limit_s):
                return
            stuck = stacks([x for x in threading.enumerate() if x is not threading.current_thread()])
            on_stuck(f"the warm-up run of {self.script} (uncontrolled, as `python {self.script}` runs it) did not "
                     f"finish within {limit_s:g} s: " + "; ".join(stuck))

        watcher = None
        if on_stuck is not None:
            watcher = threading.Thread(target=watch, name="racelab-warm-up-watch", daemon=True)
            watcher.start()
        saved_hook, threading.excepthook = threading.excepthook, lambda a: None
        saved_exit = os._exit

        main_ident = threading.get_ident()

        def leave(status):
            # os._exit from the script would end the worker. Natively it ends
            # every thread at once: end the calling thread, and the run's main
            # code too (the warm-up's outcome is not judged), so a main thread
            # waiting for the thread that called it does not wait forever.
            if threading.get_ident() != main_ident:
                import ctypes
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main_ident), ctypes.py_object(SystemExit))
            raise SystemExit(status)

        os._exit = leave
        try:
            self._exec([], "none", on_main_done=self._stop_native_daemons)
        finally:
            os._exit = saved_exit
            threading.excepthook = saved_hook
            done.set()
            if watcher is not None:
                watcher.join()
        torch_state.restore()
        torch_state.reset()

    @staticmethod
    def _stop_native_daemons(left):
        """Daemon threads of the warm-up still running when its main code is
        done: an exception raised in each asynchronously (the interpreter's
        exit freezes them; a worker must stop them). One blocked in a real
        wait that nothing will end stays blocked, harmlessly."""
        import ctypes
        for t in left:
            if t.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(t.ident), ctypes.py_object(SystemExit))

    # --- a trial ---------------------------------------------------------------
    def run(self):
        errors = self.errors = []  # read by the worker if the script calls os._exit
        leftover = []

        def hook(a):
            if not issubclass(a.exc_type, (bridge.TrialAborted, SystemExit)):
                errors.append(_describe(a.exc_value, a.exc_type))

        def end_leftover(left):
            # Daemon threads left when the main code is done: unwound, and the
            # trial classified by what was observed, as if they had ended.
            if left:
                leftover.extend(left)
                for t in left:
                    t._racelab_unwind = True  # its real waits end (racelab.sync.Condition)
                bridge.unwind_leftover(True, f"{len(left)} daemon thread(s) still running when the script ended")

        saved_hook, threading.excepthook = threading.excepthook, hook
        fallbacks_before = self.monitor.hits.get("compiled.eager_fallback", 0)
        tee = _Tee() if self.fail_on_output else None
        try:
            if tee:
                tee.begin()
            status = self._exec(errors, self.mitigation, on_main_done=end_leftover)
        finally:
            threading.excepthook = saved_hook
            if tee:
                tee.end()
        if status != self.expect_exit:
            errors.append(f"exit status {status} (expected {self.expect_exit})")
        wrong = ""
        if tee:
            for line in "".join(tee.chunks).splitlines():
                if self.fail_re.search(line):
                    wrong = f"output matched fail_on_output '{self.fail_on_output}': {line}"
                    break
        stuck = torch_state.problems()
        obs = {
            "errors": errors,
            "wrong_result": wrong,
            "stuck_state": "; ".join(stuck) + (" after the script returned" if stuck else ""),
            "silent_fallbacks": self.monitor.hits.get("compiled.eager_fallback", 0) - fallbacks_before,
            "metrics": {"torch": torch_state.version()},
        }
        if leftover:
            obs["metrics"]["daemon_threads_left"] = len(leftover)
            self.leftover = leftover
        return obs

    def finish_leftover(self):
        """After the trial's end: waits a moment for unwound daemon threads
        (a free-running trial's ones unwind at their next call into racelab);
        True when none is left, else the process must not be reused."""
        left = getattr(self, "leftover", [])
        for t in left:
            t.join(1.0)
        alive = [t for t in left if t.is_alive()]
        bridge.unwind_leftover(False)
        return not alive


class _Tee:
    """sys.stdout and sys.stderr also written to a buffer, for fail_on_output
    (what Python code writes; output of C++ code goes straight to the fd)."""

    def __init__(self):
        self.chunks = []

    def begin(self):
        self.saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _TeeStream(sys.stdout, self.chunks), _TeeStream(sys.stderr, self.chunks)

    def end(self):
        sys.stdout, sys.stderr = self.saved


class _TeeStream:
    def __init__(self, stream, chunks):
        self._stream, self._chunks = stream, chunks

    def write(self, text):
        self._chunks.append(text)
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _describe(e, tp=None):
    tp = tp or type(e)
    return f"{tp.__name__}: {e}"


