"""The ctypes bridge to the engine's C ABI (racelab/host.h).

Every call that can wait for the scheduler (a point, a thread's start, a join,
a block) is a plain CDLL call, so ctypes releases the GIL while the thread
waits for its turn. When the engine abandons a trial (deadlock, watchdog,
divergence) such a call answers "aborted" and the bridge raises TrialAborted in
that thread, which unwinds it; racelab's Thread swallows it at the top.
"""
import ctypes
import json
import os
import threading

OK, ABORTED, ERROR, FREE, TIMEDOUT = 0, 1, -1, 2, 3
ABI_VERSION = 3


class TrialAborted(BaseException):
    """The engine ended the trial; the thread unwinds. Not an error of the code under test."""


class BridgeError(RuntimeError):
    pass


_lib = None


def load(candidates):
    """Loads the first existing library of `candidates` (paths); returns its path."""
    global _lib
    tried = []
    for path in candidates:
        if not path:
            continue
        tried.append(path)
        if os.path.exists(path):
            lib = ctypes.CDLL(path)
            _declare(lib)
            if lib.racelab_host_abi_version() != ABI_VERSION:
                raise BridgeError(f"{path}: ABI version {lib.racelab_host_abi_version()}, expected {ABI_VERSION}")
            _lib = lib
            return path
    raise BridgeError("libracelab_host.so not found (tried: " + ", ".join(tried or ["nothing"]) + ")")


def _declare(lib):
    c_int, c_char_p, c_void_p, uintptr = ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t
    c_int64 = ctypes.c_int64
    sigs = {
        "racelab_host_abi_version": ([], c_int),
        "racelab_host_last_error": ([], c_char_p),
        "racelab_host_worker_open": ([], c_int),
        "racelab_host_trial_begin": ([c_char_p], c_int),
        "racelab_host_enter_main": ([], c_int),
        "racelab_host_exit_main": ([], c_int),
        "racelab_host_trial_end": ([c_char_p], c_void_p),
        "racelab_host_free": ([c_void_p], None),
        "racelab_host_managed": ([], c_int),
        "racelab_host_point": ([c_char_p], c_int),
        "racelab_host_thread_create": ([], c_int),
        "racelab_host_thread_start": ([c_int], c_int),
        "racelab_host_thread_end": ([c_int], None),
        "racelab_host_join": ([c_int], c_int),
        "racelab_host_block": ([uintptr, c_char_p], c_int),
        "racelab_host_yield": ([c_char_p], c_int),
        "racelab_host_end_leftover": ([c_char_p], c_int),
        "racelab_host_release": ([uintptr], None),
        "racelab_host_acquire": ([uintptr, c_char_p], None),
        "racelab_host_forget_after_fork": ([], None),
        "racelab_host_now_ns": ([], c_int64),
        "racelab_host_sleep": ([c_char_p, c_int64], c_int),
        "racelab_host_block_for": ([uintptr, c_char_p, c_int64], c_int),
        "racelab_host_join_for": ([c_int, c_char_p, c_int64], c_int),
        "racelab_host_step_out": ([c_char_p], c_int),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res


# Where each managed thread was when the engine abandoned the trial (thread
# ident -> (thread name, what it waited on, its stack)), for the hang
# diagnostics; the worker clears it at each trial's start.
aborted_at = {}


def _note_abort(what):
    me = _get_ident()
    if me not in aborted_at:
        import sys
        aborted_at[me] = (threading.current_thread().name, what, sys._getframe(2))


def _check(rc, what=None):
    if rc == OK:
        return
    if rc == ABORTED:
        _note_abort(what)
        raise TrialAborted()
    raise BridgeError(_lib.racelab_host_last_error().decode(errors="replace"))


def loaded():
    return _lib is not None


def worker_open():
    return _lib.racelab_host_worker_open() == OK


def managed():
    return _lib is not None and _lib.racelab_host_managed() == 1


# Whether the running trial has a scheduler (any strategy but os and
# os+jitter); the worker sets it at each trial's start.
trial_scheduled = False


def scheduled():
    """The calling thread is a managed thread of a trial under a scheduler:
    its waits are the scheduler's; anywhere else they are real ones."""
    return trial_scheduled and managed()


def point(name):
    """An interleaving point; `name` is bytes (hot path) or str."""
    if isinstance(name, str):
        name = name.encode()
    rc = _lib.racelab_host_point(name)
    if rc != OK:
        _check(rc, name)
    if _unwinding and managed():
        raise TrialAborted()


# What each managed thread waits on right now (thread ident -> name), for the
# hang diagnostics: set around every call that can wait for its turn.
waiting = {}
_get_ident = threading.get_ident


def block(resource, what):
    what = what.encode() if isinstance(what, str) else what
    me = _get_ident()
    waiting[me] = what
    try:
        _check(_lib.racelab_host_block(resource, what), what)
    finally:
        waiting.pop(me, None)
    if _unwinding:
        raise TrialAborted()


def _stepped(rc, name):
    """True after a step under a scheduler; False (FREE) when the caller runs
    freely and must wait for real."""
    if rc == FREE:
        if _unwinding and managed():
            raise TrialAborted()
        return False
    _check(rc, name)
    return True


def step_aside(name):
    """A step at which the caller steps aside (a poll: Event.is_set): True
    after it under a scheduler; False when the caller must wait for real."""
    return _stepped(_lib.racelab_host_yield(name.encode() if isinstance(name, str) else name), name)


_MAX_NS = (1 << 63) - 1


def _ns(seconds):
    """A timeout in seconds as the ABI's ns: negative is 0, huge is 'forever'."""
    if seconds <= 0:
        return 0
    return _MAX_NS if seconds >= _MAX_NS / 1e9 else int(seconds * 1e9)


def now_ns():
    """The trial's logical time in ns (racelab/host.h), or -1 when the caller
    is not scheduled and must read the real clock."""
    return _lib.racelab_host_now_ns() if _lib is not None else -1


def sleep(name, seconds):
    """time.sleep under a scheduler: `seconds` of logical time pass while the
    others run. False when the caller is not scheduled and must sleep for real."""
    return _stepped(_lib.racelab_host_sleep(name.encode() if isinstance(name, str) else name, _ns(seconds)), name)


def _timed(rc, what):
    if rc == FREE:
        return None
    if rc == TIMEDOUT:
        return False
    _check(rc, what)
    if _unwinding:
        raise TrialAborted()
    return True


def _wait_named(what, call):
    """call(what) waits in the scheduler; `what` is shown in the hang diagnostics meanwhile."""
    what = what.encode() if isinstance(what, str) else what
    me = _get_ident()
    waiting[me] = what
    try:
        return _timed(call(what), what)
    finally:
        waiting.pop(me, None)


def block_for(resource, what, seconds):
    """A wait with a timeout, in the scheduler: True when `resource` was
    released, False when the timeout expired in logical time, None when the
    caller is not scheduled and must wait for real."""
    return _wait_named(what, lambda w: _lib.racelab_host_block_for(resource, w, _ns(seconds)))


def join_for(thread_id, what, seconds):
    """A join with a timeout: True when the managed thread ended, False when
    the timeout expired in logical time, None when not scheduled."""
    return _wait_named(what, lambda w: _lib.racelab_host_join_for(thread_id, w, _ns(seconds)))


def step_out(what):
    """The calling thread is about to wait in the OS for something no managed
    thread does (another process, a thread racelab does not manage): under a
    scheduler it is let go, so the others run meanwhile; it rejoins at its
    next call. Call it right before the real wait, with no call into racelab
    in between (that call would rejoin)."""
    if _lib is not None:
        _lib.racelab_host_step_out(what.encode() if isinstance(what, str) else what)


# Set when a trial's body ended and its threads left over (Python daemon
# threads) must unwind: a free-running trial has no scheduler to abort them,
# so their next call here raises TrialAborted.
_unwinding = False


def unwinding():
    return _unwinding


def unwind_leftover(on, why=""):
    """Starts (on=True) or ends the unwinding of the threads left when the body ended."""
    global _unwinding
    _unwinding = on
    if on and _lib is not None:
        _check(_lib.racelab_host_end_leftover(why.encode()))


def release(resource):
    _lib.racelab_host_release(resource)


def acquire(resource, what):
    _lib.racelab_host_acquire(resource, what.encode() if isinstance(what, str) else what)


def trial_begin(spec_line):
    _check(_lib.racelab_host_trial_begin(spec_line.encode() if isinstance(spec_line, str) else spec_line))


def enter_main():
    _check(_lib.racelab_host_enter_main())


def exit_main():
    _check(_lib.racelab_host_exit_main())


def trial_end(observation):
    p = _lib.racelab_host_trial_end(json.dumps(observation).encode())
    if not p:
        raise BridgeError(_lib.racelab_host_last_error().decode(errors="replace"))
    try:
        return json.loads(ctypes.string_at(p).decode())
    finally:
        _lib.racelab_host_free(p)


def forget_after_fork():
    _lib.racelab_host_forget_after_fork()


def thread_create():
    """A managed id for a thread the calling thread is about to start, or -1."""
    return _lib.racelab_host_thread_create() if managed() else -1


def run_managed(thread_id, body):
    """A started thread's body as managed thread `thread_id`: it waits for its
    turn first, and ends in the scheduler last; TrialAborted ends it quietly."""
    rc = _lib.racelab_host_thread_start(thread_id)
    try:
        if rc == OK:
            body()
    except TrialAborted:
        pass
    finally:
        _lib.racelab_host_thread_end(thread_id)


def join(thread_id):
    """Waits in the scheduler for a managed thread to end (before the OS join)."""
    me = _get_ident()
    waiting[me] = f"join of managed thread {thread_id}"
    try:
        _check(_lib.racelab_host_join(thread_id), waiting[me])
    finally:
        waiting.pop(me, None)


class Thread(threading.Thread):
    """A thread whose exceptions become observations: appended to `errors` as
    "TypeName: message". It is managed, as every thread a managed thread starts
    is, once racelab.sync is installed."""

    def __init__(self, target, args=(), errors=None, name=None):
        super().__init__(name=name, daemon=True)
        self._rl_target, self._rl_args = target, args
        self._rl_errors = errors if errors is not None else []

    def run(self):
        try:
            self._rl_target(*self._rl_args)
        except TrialAborted:
            raise
        except BaseException as e:  # noqa: BLE001 -- every failure of the code under test is an observation
            self._rl_errors.append(f"{type(e).__name__}: {e}")
