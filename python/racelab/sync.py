"""Controlled replacements of threading's locks, installed before torch is imported.

Dynamo's compile lock and most of torch's Python-side locks are threading.Lock
or threading.RLock. A managed thread that blocks on one of them in the OS,
while the scheduler waits for it, would hang the trial. So install() replaces
threading.Lock, RLock and Condition with the classes below, which keep the
contract of racelab/sync.h: uncontrolled (no trial, or a thread racelab does
not manage) they are the real primitive plus one check; controlled, each
acquisition is a point and blocking is reported to the scheduler instead of the
OS. threading.Event, Semaphore and Barrier build on Condition(Lock()), looked up
in threading's module globals when they are made, so they are controlled too.

Only locks made after install() are controlled: install before importing torch.
Under control a notify wakes every waiter (waits must re-check, as Python
allows). In a free-running trial (os, os+jitter) and outside trials, waits are real.

Time under a scheduler is logical (racelab/host.h): it passes with the steps
and jumps when only waiting threads are left. Waits with a timeout keep
Python's contract on it -- Thread.join, Lock/RLock/Semaphore.acquire,
Condition.wait/wait_for, Event.wait, Barrier.wait, queue's get/put,
concurrent.futures' waits, threading.Timer, time.sleep: each returns as soon as
what it waits for happens (the thread ended, a notify, a release), and times
out only when its deadline passes in logical time, or when nothing else could
run and its deadline was the first. A timeout that fired is named in the
detail of a failing trial. The clocks a program reads (time.monotonic, time,
perf_counter and their _ns forms, and the copies threading and queue keep)
read that logical time in a scheduled thread, so a deadline a program computes
itself agrees with the waits; each read moves it on 1 us, as in exec.

What threads that poll call is a point too, so a polling thread lets the
others run: Event.is_set steps aside; queue.SimpleQueue (C, blocking in the
OS) is replaced by queue's own Python version, built on a Semaphore, so it and
concurrent.futures' pools wait through the Condition below. A Thread.join
returns once the thread's managed part ended, after the OS thread has ended
too, so is_alive() is false after it, as natively.

Other processes run outside the schedule. multiprocessing's and
ProcessPoolExecutor's helper threads (pool handlers, queue feeders, the
executor's manager) are not managed: they wait on pipes and processes, in
real time. The locks, conditions and events that code makes are "outside"
ones, invisible to the scheduler, and while such a helper thread or a child
process is alive, every wait of a managed thread is a real one. A managed
thread steps out of the schedule (bridge.step_out) right before each real
wait, so the others run meanwhile and logical time never jumps past a child
process's work; the wait keeps its real timeout, as natively. A forked child
forgets the scheduler and runs freely, as natively.
"""
import _thread
import os
import queue
import sys
import threading
import time

from . import bridge

_real_lock = _thread.allocate_lock
_get_ident = _thread.get_ident
_RealCondition = threading.Condition
_installed = False


def _creation_site(depth=2):
    """'lock@module': a name stable across runs for a lock made at module level."""
    try:
        f = sys._getframe(depth)
        return "lock@" + f.f_globals.get("__name__", "?")
    except ValueError:
        return "lock@?"


# --- outside the schedule --------------------------------------------------

# Code that waits on other processes: its threads are not managed and its
# primitives are outside ones.
_OUTSIDE = ("multiprocessing", "concurrent.futures.process")
# Frames passed over when finding who made a primitive: the primitives' own
# modules (an Event's Condition is made by threading, for its caller).
_PRIMITIVES = ("threading", "queue", "racelab", "concurrent.futures._base", "_weakrefset")
_real_os_exit = os._exit
_outside_threads = set()  # live helper threads of _OUTSIDE code (not managed)


def _in(module, prefixes):
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _made_outside():
    """Whether the primitive being made belongs to _OUTSIDE code: the first
    frame past the primitives' own modules is in it."""
    try:
        f = sys._getframe(2)
    except ValueError:
        return False
    while f is not None:
        module = f.f_globals.get("__name__", "")
        if not _in(module, _PRIMITIVES):
            return _in(module, _OUTSIDE)
        f = f.f_back
    return False


def _outside_alive():
    """A helper thread of _OUTSIDE code, or a child process, is alive: what a
    managed thread waits for may come from outside the schedule."""
    if _outside_threads:
        return True
    mp = sys.modules.get("multiprocessing.process")
    if mp is None or not mp._children:
        return False
    for p in list(mp._children):
        popen = getattr(p, "_popen", None)
        if popen is not None and popen.poll() is None:
            return True
    return False


def _wait_outside(what, wait):
    """A real wait in a managed thread: out of the schedule first when it
    would block (wait(False) tries without blocking; wait(True) blocks)."""
    got = wait(False)
    if got:
        return got
    if bridge.scheduled():
        bridge.step_out(what)
    return wait(True)


# --- logical clocks -------------------------------------------------------

_real_monotonic, _real_monotonic_ns = time.monotonic, time.monotonic_ns
_real_time, _real_time_ns = time.time, time.time_ns
_real_perf_counter, _real_perf_counter_ns = time.perf_counter, time.perf_counter_ns
_READ_NS = 1000  # a clock read moves logical time on 1 us, as in exec: a loop that only reads the clock ends
# Per clock: its real reading (ns) when the trial began, and the highest value
# handed out, so that a clock never runs backwards from one trial to the next.
_base = {"monotonic": 0, "time": 0, "perf": 0}
_high = {"monotonic": 0, "time": 0, "perf": 0}
_reads = [0]


def begin_trial():
    """Called by the worker before each trial: the logical clocks start from now."""
    for key, real in (("monotonic", _real_monotonic_ns), ("time", _real_time_ns), ("perf", _real_perf_counter_ns)):
        _base[key] = max(real(), _high[key])
    _reads[0] = 0


def _logical_ns():
    """Logical ns since the trial began for a scheduled thread; None elsewhere."""
    if not bridge.trial_scheduled:
        return None
    ns = bridge.now_ns()
    if ns < 0:
        return None
    _reads[0] += 1
    return ns + _reads[0] * _READ_NS


def _clock_pair(key, real, real_ns):
    def clock_ns():
        ns = _logical_ns()
        if ns is None:
            return real_ns()
        v = _base[key] + ns
        _high[key] = max(_high[key], v)
        return v

    def clock():
        ns = _logical_ns()
        if ns is None:
            return real()
        v = _base[key] + ns
        _high[key] = max(_high[key], v)
        return v / 1e9

    clock.__name__, clock_ns.__name__ = real.__name__, real_ns.__name__
    return clock, clock_ns


monotonic, monotonic_ns = _clock_pair("monotonic", _real_monotonic, _real_monotonic_ns)
wall_time, wall_time_ns = _clock_pair("time", _real_time, _real_time_ns)
perf_counter, perf_counter_ns = _clock_pair("perf", _real_perf_counter, _real_perf_counter_ns)


# The modules whose frames are the waits' plumbing, not the program's code.
_PLUMBING = {"threading", "queue", "concurrent", "asyncio", "racelab", "multiprocessing"}


def _describe(kind, timeout):
    """The timed wait as the program wrote it, e.g. 'Event.wait(timeout=5) at
    train.py:42': the outermost public call of the plumbing (threading,
    queue, concurrent.futures) and the program's line that made it."""
    api = kind
    try:
        f = sys._getframe(2)
    except ValueError:
        f = None
    while f is not None:
        if f.f_globals.get("__name__", "").split(".")[0] not in _PLUMBING:
            return f"{api}(timeout={timeout:.3g}) at {os.path.basename(f.f_code.co_filename)}:{f.f_lineno}"
        name = getattr(f.f_code, "co_qualname", f.f_code.co_name)
        if "<" not in name and not name.rsplit(".", 1)[-1].startswith("_"):
            api = name
        f = f.f_back
    return f"{api}(timeout={timeout:.3g})"


class Lock:
    __slots__ = ("_lock", "_owner", "name", "_bname", "_outside", "__weakref__")

    def __init__(self, name=None):
        self._lock = _real_lock()
        self._owner = None
        self._outside = _made_outside()
        self.rename(name or _creation_site())

    def rename(self, name):
        self.name = name
        self._bname = name.encode()

    def acquire(self, blocking=True, timeout=-1):
        if not bridge.managed():
            got = self._lock.acquire(blocking, timeout)
        elif self._outside or _outside_alive():
            if not blocking:
                got = self._lock.acquire(False)
            else:
                got = _wait_outside(self._bname, lambda block: self._lock.acquire(True, timeout) if block
                                    else self._lock.acquire(False))
        else:
            if not blocking and timeout != -1:
                raise ValueError("can't specify a timeout for a non-blocking call")
            if timeout is not None and timeout < 0 and timeout != -1:
                raise ValueError("timeout value must be a non-negative number")
            bridge.point(self._bname)
            got = self._lock.acquire(False)
            if not got and blocking:
                if timeout is not None and timeout >= 0:
                    got = self._acquire_timed(timeout)
                else:
                    while not got:
                        bridge.block(id(self), self._bname)
                        got = self._lock.acquire(False)
            if got:
                bridge.acquire(id(self), self._bname)
        if got:
            self._owner = _get_ident()
        return got

    def _acquire_timed(self, timeout):
        """Blocks in the scheduler until a release, or until `timeout` seconds
        of logical time have passed; one last try then."""
        what = _describe("Lock.acquire", timeout) + f" of {self.name}"
        start = bridge.now_ns()
        left = timeout
        while True:
            woken = bridge.block_for(id(self), what, left)
            if woken is None:  # not scheduled after all: a real timed wait
                return self._lock.acquire(True, left)
            got = self._lock.acquire(False)
            if got or not woken:
                return got
            # Released, and another thread took it first: wait for the rest.
            left = timeout - (bridge.now_ns() - start) / 1e9
            if left <= 0:
                return self._lock.acquire(False)

    def release(self):
        self._owner = None
        self._lock.release()
        if not self._outside and bridge.managed():
            bridge.release(id(self))

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()

    def locked(self):
        return self._lock.locked()

    def _is_owned(self):
        return self._lock.locked() and self._owner == _get_ident()

    def _take_unwinding(self):
        """The lock taken for real while the thread unwinds an abandoned
        trial (every thread then runs freely, and its holder is unwinding
        too), so a `with` block around a wait can release it on its way out."""
        self._lock.acquire()
        self._owner = _get_ident()

    def _at_fork_reinit(self):
        self._lock = _real_lock()
        self._owner = None

    def __repr__(self):
        return f"<racelab.sync.Lock {self.name} {'locked' if self.locked() else 'unlocked'}>"


class RLock:
    __slots__ = ("_block", "_owner", "_count", "__weakref__")

    def __init__(self, name=None):
        self._block = Lock(name or _creation_site())
        self._owner = None
        self._count = 0

    @property
    def name(self):
        return self._block.name

    @property
    def _outside(self):
        return self._block._outside

    def rename(self, name):
        self._block.rename(name)

    def acquire(self, blocking=True, timeout=-1):
        me = _get_ident()
        if self._owner == me:
            self._count += 1
            return True
        if not self._block.acquire(blocking, timeout):
            return False
        self._owner, self._count = me, 1
        return True

    __enter__ = acquire

    def release(self):
        if self._owner != _get_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self._count -= 1
        if self._count == 0:
            self._owner = None
            self._block.release()

    def __exit__(self, *exc):
        self.release()

    def locked(self):
        return self._block.locked()

    def _is_owned(self):
        return self._owner == _get_ident()

    def _recursion_count(self):
        # CPython's RLock has it (3.12+), and multiprocessing asks it.
        return self._count if self._owner == _get_ident() else 0

    def _release_save(self):
        state = (self._count, self._owner)
        self._count, self._owner = 0, None
        self._block.release()
        return state

    def _acquire_restore(self, state):
        self._block.acquire()
        self._count, self._owner = state

    def _take_unwinding(self, state=(1, None)):
        self._block._take_unwinding()
        self._count, self._owner = state[0], _get_ident()

    def _at_fork_reinit(self):
        self._block._at_fork_reinit()
        self._owner, self._count = None, 0


class Condition:
    """threading.Condition's interface; uncontrolled waits are the real ones."""

    def __init__(self, lock=None):
        self._lock = lock if lock is not None else RLock()
        self.acquire = self._lock.acquire
        self.release = self._lock.release
        self._real = _RealCondition(self._lock)
        self._notified = 0
        self._outside = getattr(self._lock, "_outside", False) or _made_outside()

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)

    def _release_save(self):
        if hasattr(self._lock, "_release_save"):
            return self._lock._release_save()
        self._lock.release()
        return None

    def _acquire_restore(self, state):
        if hasattr(self._lock, "_acquire_restore"):
            self._lock._acquire_restore(state)
        else:
            self._lock.acquire()

    def wait(self, timeout=None):
        if not bridge.scheduled():
            if timeout is None:
                # The real wait, in slices, so that a trial's daemon thread
                # left waiting when a free-running script ended can unwind.
                me = threading.current_thread()
                while not self._real.wait(0.05):
                    if bridge.unwinding() and getattr(me, "_racelab_unwind", False):
                        raise bridge.TrialAborted()
                return True
            return self._real.wait(timeout)
        if not self._lock._is_owned():
            raise RuntimeError("cannot wait on un-acquired lock")
        if self._outside or _outside_alive():
            return self._wait_real(timeout)
        seen = self._notified
        state = self._release_save()
        try:
            if timeout is None:
                # No other managed thread runs between the release above and
                # this block, so a notify cannot slip in unseen.
                bridge.block(id(self), b"condition.wait")
            else:
                # A notify, or the timeout in logical time.
                bridge.block_for(id(self), _describe("Condition.wait", timeout), timeout)
        finally:
            try:
                self._acquire_restore(state)
            except bridge.TrialAborted:
                # Unwinding: the caller's `with` releases the lock on its way
                # out, so it must hold it (RuntimeError otherwise).
                if isinstance(self._lock, RLock) and state is not None:
                    self._lock._take_unwinding(state)
                else:
                    self._lock._take_unwinding()
                raise
        return self._notified != seen

    def _wait_real(self, timeout):
        """A managed thread's real wait (threading.Condition's own): what it
        waits for may come from outside the schedule. Out of the schedule
        after the release (a release may rejoin it) and right before blocking."""
        waiter = _real_lock()
        waiter.acquire()
        self._real._waiters.append(waiter)
        state = self._release_save()
        got = False
        try:
            bridge.step_out(b"condition.wait")
            got = waiter.acquire(True, -1 if timeout is None else max(timeout, 0))
            return got
        finally:
            self._acquire_restore(state)
            if not got:
                try:
                    self._real._waiters.remove(waiter)
                except ValueError:
                    pass

    def wait_for(self, predicate, timeout=None):
        # threading.Condition.wait_for's own loop, on the clock that the
        # waits keep (logical under a scheduler).
        endtime = None
        waittime = timeout
        result = predicate()
        while not result:
            if waittime is not None:
                if endtime is None:
                    endtime = monotonic() + waittime
                else:
                    waittime = endtime - monotonic()
                    if waittime <= 0:
                        break
            self.wait(waittime)
            result = predicate()
        return result

    def notify(self, n=1):
        self.notify_all()

    def notify_all(self):
        self._notified += 1
        self._real.notify_all()
        if not self._outside and bridge.managed():
            bridge.release(id(self))

    notifyAll = notify_all

    def _at_fork_reinit(self):
        self._lock._at_fork_reinit()
        self._real._at_fork_reinit()


def _thread_init_with_real_started(original):
    # A new thread signals its start before it is managed (racelab's Thread
    # becomes managed in run()), so the parent's wait for that signal must be
    # the OS's: an unmanaged notify cannot wake a thread waiting in the scheduler.
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self._started._cond = _RealCondition(_real_lock())
        # threading's own bookkeeping, not a poll: Thread.start asks it before
        # the new thread exists, so stepping aside there would wait for a
        # thread that cannot take its turn.
        self._started._racelab_internal = True

    return __init__


def _managed_start(original):
    # A thread started by a managed thread is managed (racelab/sync.h's Thread):
    # its id is taken here, in the parent, and its run() waits for its turn.
    def start(self):
        if _in(getattr(getattr(self, "_target", None), "__module__", None) or type(self).__module__, _OUTSIDE):
            # A helper of multiprocessing or a process pool: it waits on pipes
            # and processes, in real time, so it runs outside the schedule.
            self._racelab_id = -1
            self._racelab_done = False
            _outside_threads.add(self)
            body = self.run

            def run():
                try:
                    body()
                finally:
                    _outside_threads.discard(self)

            self.run = run
            try:
                return original(self)
            except BaseException:
                _outside_threads.discard(self)
                raise
        rid = bridge.thread_create() if bridge.loaded() else -1
        self._racelab_id = rid
        self._racelab_done = False
        if rid >= 0:
            body = self.run

            def run():
                try:
                    bridge.run_managed(rid, body)
                finally:
                    self._racelab_done = True

            self.run = run
        original(self)

    return start


def _managed_join(original):
    # A managed parent waits in the scheduler first, so the OS join never
    # blocks a thread the scheduler believes is running. A timed join returns
    # as soon as the thread's managed part ended, or when its timeout expired
    # in logical time; once the managed part ended, the OS join that follows
    # waits for the little left (threading's own clean-up), so is_alive() and
    # threading.enumerate() agree with the join, as natively.
    def join(self, timeout=None):
        rid = getattr(self, "_racelab_id", -1)
        if rid >= 0 and bridge.scheduled():
            if timeout is not None:
                ended = bridge.join_for(rid, _describe("Thread.join", timeout) + f" of {self.name}", timeout)
                if ended is False:
                    return
                if ended is None:  # not scheduled after all: the real timed join
                    return original(self, timeout)
            else:
                bridge.join(rid)
            timeout = None
        elif rid < 0 and bridge.scheduled() and self.is_alive():
            bridge.step_out(b"Thread.join of a thread racelab does not manage")
        original(self, timeout)

    return join


def _controlled_select(original):
    # An event loop's wait (asyncio's selector): in the OS, a managed thread
    # there would hold the turn while the thread it waits for (an
    # asyncio.to_thread or run_in_executor worker) never gets it. Under a
    # scheduler it polls instead, sleeping 1 ms of logical time between polls,
    # until an event or its timeout in logical time.
    def select(self, timeout=None):
        if not bridge.scheduled():
            return original(self, timeout)
        if _outside_alive() or _called_from_outside():
            # Waits on pipes or processes (multiprocessing's connection.wait,
            # a process pool's results): real, out of the schedule.
            ready = original(self, 0)
            if ready or (timeout is not None and timeout <= 0):
                return ready
            bridge.step_out(b"selector.select")
            return original(self, timeout)
        deadline = None if timeout is None else monotonic() + max(timeout, 0)
        while True:
            ready = original(self, 0)
            if ready:
                return ready
            left = None if deadline is None else deadline - monotonic()
            if left is not None and left <= 0:
                return ready
            if not bridge.sleep(b"selector.select", 0.001 if left is None else min(0.001, left)):
                return original(self, timeout)

    return select


def _called_from_outside():
    f = sys._getframe(2)
    while f is not None:
        if _in(f.f_globals.get("__name__", ""), _OUTSIDE):
            return True
        f = f.f_back
    return False


_real_sleep = time.sleep
_real_is_set = threading.Event.is_set


def _sleep(seconds):
    """time.sleep: under a scheduler, `seconds` of logical time while the
    others run (no wall time passes)."""
    if not bridge.scheduled():
        return _real_sleep(seconds)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    if _outside_alive():
        # A poll of another process's work: real time must pass.
        bridge.step_out(b"time.sleep")
        return _real_sleep(seconds)
    if not bridge.sleep(b"time.sleep", seconds):
        _real_sleep(seconds)


def _is_set(self):
    """Event.is_set: a polling loop's test, so a step aside under a scheduler."""
    if bridge.scheduled() and not getattr(self, "_racelab_internal", False):
        bridge.step_aside(b"event.is_set")
    return _real_is_set(self)


def _after_fork_in_child():
    # A child forked during a trial (multiprocessing's fork and forkserver
    # contexts, os.fork): the scheduler's threads are not in this process.
    # It runs freely, as natively, and ends as a process ends.
    if bridge.loaded():
        bridge.forget_after_fork()
    bridge.trial_scheduled = False
    os._exit = _real_os_exit
    _outside_threads.clear()


def _semlock_acquire(sem):
    # multiprocessing's Lock, Semaphore and the like (a SemLock, in C): one
    # that would block waits for another process, or an unmanaged thread.
    def acquire(block=True, timeout=None):
        if block and bridge.scheduled():
            return _wait_outside(b"multiprocessing lock",
                                 lambda wait: sem.acquire(True, timeout) if wait else sem.acquire(False))
        return sem.acquire(block, timeout)

    return acquire


def _patch_multiprocessing():
    """multiprocessing's own blocking calls (SemLock acquires, pipe reads)
    step out of the schedule before they block."""
    try:
        import multiprocessing.connection as connection
        import multiprocessing.synchronize as synchronize
    except ImportError:  # no sem_open on this system: multiprocessing cannot run at all
        return
    make = synchronize.SemLock._make_methods

    def _make_methods(self):
        make(self)
        self.acquire = _semlock_acquire(self._semlock)

    synchronize.SemLock._make_methods = _make_methods
    synchronize.SemLock.__enter__ = lambda self: self.acquire()

    def reading(original):
        def read(self, *args, **kwargs):
            if bridge.scheduled() and not self.poll(0):
                bridge.step_out(b"Connection.recv")
            return original(self, *args, **kwargs)

        return read

    for name in ("recv", "recv_bytes", "recv_bytes_into"):
        setattr(connection.Connection, name, reading(getattr(connection.Connection, name)))


def install():
    """Replaces threading.Lock, RLock and Condition and makes every thread a
    managed thread starts managed; idempotent. Returns what it replaced."""
    global _installed
    if not _installed:
        threading.Lock = Lock
        threading.RLock = RLock
        threading.Condition = Condition
        threading.Thread.__init__ = _thread_init_with_real_started(threading.Thread.__init__)
        threading.Thread.start = _managed_start(threading.Thread.start)
        threading.Thread.join = _managed_join(threading.Thread.join)
        threading.Event.is_set = _is_set
        time.sleep = _sleep
        time.monotonic, time.monotonic_ns = monotonic, monotonic_ns
        time.time, time.time_ns = wall_time, wall_time_ns
        time.perf_counter, time.perf_counter_ns = perf_counter, perf_counter_ns
        threading._time = monotonic  # Semaphore's and Barrier's deadlines
        queue.time = monotonic       # Queue.get/put's deadlines
        queue.SimpleQueue = queue._PySimpleQueue
        import selectors
        for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector", "KqueueSelector"):
            cls = getattr(selectors, name, None)
            if cls is not None and "select" in cls.__dict__:
                cls.select = _controlled_select(cls.__dict__["select"])
        _patch_multiprocessing()
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _installed = True
    return ["threading.Lock", "threading.RLock", "threading.Condition", "threading.Thread.start/join",
            "threading.Event (on Condition; is_set steps aside)", "threading.Semaphore, Barrier (on Condition)",
            "time.sleep (logical time)", "time.monotonic/time/perf_counter (logical under a scheduler)",
            "queue.SimpleQueue (queue's Python version)", "selectors' select (polls on logical time: asyncio)",
            "multiprocessing (helper threads unmanaged, waits on processes real, forked children free)"]
