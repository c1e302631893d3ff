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
allows), and a timed wait steps aside (another runnable thread runs first) and
times out unless it was signalled meanwhile: the scheduler knows no wall time.
In a free-running trial (os, os+jitter) and outside trials, waits are real.

What threads that poll or wait call is a point too, so a polling thread lets
the others run and a waiting one is never blocked where the scheduler cannot
see: Event.is_set and time.sleep step aside; queue.SimpleQueue (C, blocking in
the OS) is replaced by queue's own Python version, built on a Semaphore, so
it and concurrent.futures' pools wait through the Condition below; a timed
Thread.join steps aside and returns with the thread still running unless it
ended. queue.Queue, Barrier and concurrent.futures' Future are Condition-based
already.
"""
import _thread
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


class Lock:
    __slots__ = ("_lock", "_owner", "name", "_bname", "__weakref__")

    def __init__(self, name=None):
        self._lock = _real_lock()
        self._owner = None
        self.rename(name or _creation_site())

    def rename(self, name):
        self.name = name
        self._bname = name.encode()

    def acquire(self, blocking=True, timeout=-1):
        if not bridge.managed():
            got = self._lock.acquire(blocking, timeout)
        else:
            bridge.point(self._bname)
            got = self._lock.acquire(False)
            while not got and blocking:
                if timeout is not None and timeout >= 0:
                    # The scheduler knows no wall time: step aside once, then a timeout.
                    if bridge.step_aside(self._bname):
                        got = self._lock.acquire(False)
                    else:
                        got = self._lock.acquire(True, timeout)
                    break
                bridge.block(id(self), self._bname)
                got = self._lock.acquire(False)
            if got:
                bridge.acquire(id(self), self._bname)
        if got:
            self._owner = _get_ident()
        return got

    def release(self):
        self._owner = None
        self._lock.release()
        if bridge.managed():
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
        seen = self._notified
        state = self._release_save()
        try:
            if timeout is None:
                # No other managed thread runs between the release above and
                # this block, so a notify cannot slip in unseen.
                bridge.block(id(self), b"condition.wait")
            else:
                bridge.step_aside(b"condition.wait_timeout")
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

    def wait_for(self, predicate, timeout=None):
        result = predicate()
        while not result:
            notified = self.wait(timeout)
            result = predicate()
            if timeout is not None and not notified:
                break
        return result

    def notify(self, n=1):
        self.notify_all()

    def notify_all(self):
        self._notified += 1
        self._real.notify_all()
        if bridge.managed():
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
    # blocks a thread the scheduler believes is running. A timed join steps
    # aside once and, unless the thread's managed part ended, times out.
    def join(self, timeout=None):
        rid = getattr(self, "_racelab_id", -1)
        if rid >= 0 and bridge.scheduled():
            if timeout is not None:
                bridge.step_aside(b"thread.join_timeout")
                if not self._racelab_done:
                    return
            else:
                bridge.join(rid)
            timeout = None
        original(self, timeout)

    return join


_real_sleep = time.sleep
_real_is_set = threading.Event.is_set


def _sleep(seconds):
    """time.sleep: under a scheduler, a step aside (no wall time passes)."""
    if not bridge.scheduled():
        return _real_sleep(seconds)
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    bridge.step_aside(b"time.sleep")


def _is_set(self):
    """Event.is_set: a polling loop's test, so a step aside under a scheduler."""
    if bridge.scheduled() and not getattr(self, "_racelab_internal", False):
        bridge.step_aside(b"event.is_set")
    return _real_is_set(self)


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
        queue.SimpleQueue = queue._PySimpleQueue
        _installed = True
    return ["threading.Lock", "threading.RLock", "threading.Condition", "threading.Thread.start/join",
            "threading.Event (on Condition; is_set steps aside)", "threading.Semaphore, Barrier (on Condition)",
            "time.sleep (steps aside)", "queue.SimpleQueue (queue's Python version)"]
