// preload/locks.cpp -- mutexes, read-write locks, spin locks, condition
// variables, barriers, once and semaphores under control.
//
// The contract is racelab/sync.h's: taking a lock is a scheduling point, then
// a try-lock loop that blocks in the scheduler (never in the OS) while another
// thread holds it; releasing tells the scheduler, which makes the threads
// blocked on it runnable again. A condition wait releases the mutex and blocks
// on the condition variable until a signal or broadcast (both wake every
// waiter: POSIX allows spurious wake-ups, so correct programs re-check). A
// timed wait (cond_timedwait, mutex_timedlock, sem_timedwait, the rwlocks')
// keeps its contract on logical time (Scheduler::on_block_until): it ends as
// soon as what it waits for happens, and times out only when its deadline
// passes -- through the others' steps, or when nothing else could run.
// std::mutex, std::condition_variable, std::shared_mutex and std::call_once
// are built on these calls, so they come under control with them.
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include <map>
#include <mutex>
#include <unordered_map>

#include "preload/cancel.h"
#include "preload/control.h"
#include "preload/real.h"

namespace racelab::preload {

namespace {

// try_lock: 0 when taken, EBUSY when another holds it, or another error to return.
template <class TryLock>
int acquire(const void* lock, const char* point, const char* kind, TryLock try_lock) {
  const int me = tl.id;
  engine([&] { g_sched->on_point(point); });
  for (;;) {
    int rc = try_lock();
    if (rc == 0) break;
    if (rc != EBUSY) return rc;
    note_waiting(me, lock, kind);
    engine([&] { g_sched->on_block(lock, point); });
  }
  note_waiting(me, nullptr, nullptr);
  note_owner(lock, me);
  return 0;
}

// A timed acquisition (pthread_mutex_timedlock, sem_timedwait, the rwlocks'):
// blocked in the scheduler until a release, or until its deadline passes in
// logical time (Scheduler::on_block_until), then one last try.
template <class TryLock>
int acquire_timed(const void* lock, const char* point, const char* kind, clockid_t clock,
                  const struct timespec* abstime, TryLock try_lock) {
  const int me = tl.id;
  const int64_t deadline = logical_deadline(clock, abstime);
  engine([&] { g_sched->on_point(point); });
  for (;;) {
    int rc = try_lock();
    if (rc != EBUSY) {
      if (rc == 0) note_owner(lock, me);
      return rc;
    }
    if (deadline < 0) return EINVAL;  // checked only when it would block, as the C library does
    note_waiting(me, lock, kind);
    bool woken = true;
    engine([&] { woken = g_sched->on_block_until(lock, point, deadline); });
    note_waiting(me, nullptr, nullptr);
    if (!woken) {
      rc = try_lock();
      if (rc == 0) note_owner(lock, me);
      return rc == EBUSY ? ETIMEDOUT : rc;
    }
  }
}

void released(const void* lock) {
  note_owner(lock, -1);
  engine([&] { g_sched->on_release(lock); });
}

// Shim-side state of condition variables, barriers and once controls, keyed
// by address. Touched only inside the shim (Inside), one managed thread at a time.
struct Objects {
  std::mutex mu;
  std::unordered_map<const void*, uint64_t> signals;  // condition variable -> signals so far
  struct Barrier {
    unsigned count = 0, arrived = 0;
    uint64_t generation = 0;
  };
  std::unordered_map<const void*, Barrier> barriers;
  std::unordered_map<const void*, int> once;  // 1 running, 2 done
};
Objects& objects() {
  static auto* o = new Objects;
  return *o;
}
template <class F>
auto with_objects(F f) {
  Inside in;
  Objects& o = objects();
  std::lock_guard<std::mutex> lk(o.mu);
  return f(o);
}

int relock(pthread_mutex_t* m) {
  return acquire(m, "pthread_mutex_lock", "mutex", [&] { return real().mutex_trylock(m); });
}

// timed: a deadline on `clock`; the wait ends at a signal or broadcast, or
// when the deadline passes in logical time (ETIMEDOUT).
int cond_wait(pthread_cond_t* c, pthread_mutex_t* m, bool timed, clockid_t clock = CLOCK_REALTIME,
              const struct timespec* deadline = nullptr) {
  const int64_t until = timed ? logical_deadline(clock, deadline) : INT64_MAX;
  if (until < 0) return EINVAL;
  const uint64_t before = with_objects([&](Objects& o) { return o.signals[c]; });
  int rc = real().mutex_unlock(m);
  if (rc != 0) return rc;
  released(m);
  note_waiting(tl.id, c, "condition variable");
  bool woken = true;
  if (timed)
    engine([&] { woken = g_sched->on_block_until(c, "pthread_cond_timedwait", until); });
  else
    engine([&] { g_sched->on_block(c, "pthread_cond_wait"); });
  note_waiting(tl.id, nullptr, nullptr);
  relock(m);
  if (!timed || woken) return 0;
  const uint64_t after = with_objects([&](Objects& o) { return o.signals[c]; });
  return after != before ? 0 : ETIMEDOUT;
}

int cond_wake(pthread_cond_t* c, const char* point, int (*real_wake)(pthread_cond_t*)) {
  engine([&] { g_sched->on_point(point); });
  with_objects([&](Objects& o) { return ++o.signals[c]; });
  int rc = real_wake(c);
  engine([&] { g_sched->on_release(c); });
  return rc;
}

int sem_result(int rc) {
  if (rc == 0) return 0;
  return errno == EAGAIN ? EBUSY : errno;
}

void noop() {}

// A spin lock is a volatile int; the scheduler keys resources by address.
const void* key(pthread_spinlock_t* l) { return const_cast<const int*>(l); }

}  // namespace

}  // namespace racelab::preload

using namespace racelab::preload;

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

// --- mutex ---
RACELAB_EXPORT int pthread_mutex_lock(pthread_mutex_t* m) {
  if (!controlled()) return real().mutex_lock(m);
  // An error-checking mutex locked again by its owner fails at once, as it
  // does natively; a normal one deadlocks (and the message says so).
  if ((m->__data.__kind & 3) == PTHREAD_MUTEX_ERRORCHECK_NP && owner_of(m) == tl.id) return EDEADLK;
  return relock(m);
}
RACELAB_EXPORT int pthread_mutex_trylock(pthread_mutex_t* m) {
  if (!controlled()) return real().mutex_trylock(m);
  engine([&] { g_sched->on_point("pthread_mutex_trylock"); });
  int rc = real().mutex_trylock(m);
  if (rc == 0) note_owner(m, tl.id);
  return rc;
}
RACELAB_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* t) {
  if (!controlled()) return real().mutex_timedlock(m, t);
  return acquire_timed(m, "pthread_mutex_timedlock", "mutex", CLOCK_REALTIME, t, [&] { return real().mutex_trylock(m); });
}
RACELAB_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clock, const struct timespec* t) {
  if (!controlled()) return real().mutex_clocklock(m, clock, t);
  return acquire_timed(m, "pthread_mutex_clocklock", "mutex", clock, t, [&] { return real().mutex_trylock(m); });
}
RACELAB_EXPORT int pthread_mutex_unlock(pthread_mutex_t* m) {
  int rc = real().mutex_unlock(m);
  if (rc == 0 && controlled()) released(m);
  return rc;
}

// --- condition variables ---
RACELAB_EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  if (!controlled()) return real().cond_wait(c, m);
  // A cancellation point (preload/cancel.h): a cancel acts with the mutex held,
  // on entry or once the wait ends and the mutex is taken again.
  cancel_point();
  const int rc = cond_wait(c, m, false);
  cancel_point();
  return rc;
}
RACELAB_EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* t) {
  if (!controlled()) return real().cond_timedwait(c, m, t);
  // glibc keeps the condition variable's clock (pthread_condattr_setclock) in bit 0 of __wrefs.
  cancel_point();  // a cancellation point, as pthread_cond_wait's
  const int rc = cond_wait(c, m, true, (c->__data.__wrefs & 1) != 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME, t);
  cancel_point();
  return rc;
}
RACELAB_EXPORT int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                                          const struct timespec* t) {
  if (!controlled()) return real().cond_clockwait(c, m, clock, t);
  cancel_point();
  const int rc = cond_wait(c, m, true, clock, t);
  cancel_point();
  return rc;
}
RACELAB_EXPORT int pthread_cond_signal(pthread_cond_t* c) {
  if (!controlled()) return real().cond_signal(c);
  return cond_wake(c, "pthread_cond_signal", real().cond_signal);
}
RACELAB_EXPORT int pthread_cond_broadcast(pthread_cond_t* c) {
  if (!controlled()) return real().cond_broadcast(c);
  return cond_wake(c, "pthread_cond_broadcast", real().cond_broadcast);
}

// --- read-write locks ---
RACELAB_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  if (!controlled()) return real().rw_rdlock(l);
  return acquire(l, "pthread_rwlock_rdlock", "rwlock", [&] { return real().rw_tryrdlock(l); });
}
RACELAB_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  if (!controlled()) return real().rw_wrlock(l);
  return acquire(l, "pthread_rwlock_wrlock", "rwlock", [&] { return real().rw_trywrlock(l); });
}
RACELAB_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t* l) {
  if (!controlled()) return real().rw_tryrdlock(l);
  engine([&] { g_sched->on_point("pthread_rwlock_tryrdlock"); });
  return real().rw_tryrdlock(l);
}
RACELAB_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t* l) {
  if (!controlled()) return real().rw_trywrlock(l);
  engine([&] { g_sched->on_point("pthread_rwlock_trywrlock"); });
  int rc = real().rw_trywrlock(l);
  if (rc == 0) note_owner(l, tl.id);
  return rc;
}
RACELAB_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* l, const struct timespec* t) {
  if (!controlled()) return real().rw_timedrdlock(l, t);
  return acquire_timed(l, "pthread_rwlock_timedrdlock", "rwlock", CLOCK_REALTIME, t, [&] { return real().rw_tryrdlock(l); });
}
RACELAB_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* l, const struct timespec* t) {
  if (!controlled()) return real().rw_timedwrlock(l, t);
  return acquire_timed(l, "pthread_rwlock_timedwrlock", "rwlock", CLOCK_REALTIME, t, [&] { return real().rw_trywrlock(l); });
}
RACELAB_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* l, clockid_t clock, const struct timespec* t) {
  if (!controlled()) return real().rw_clockrdlock(l, clock, t);
  return acquire_timed(l, "pthread_rwlock_clockrdlock", "rwlock", clock, t, [&] { return real().rw_tryrdlock(l); });
}
RACELAB_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* l, clockid_t clock, const struct timespec* t) {
  if (!controlled()) return real().rw_clockwrlock(l, clock, t);
  return acquire_timed(l, "pthread_rwlock_clockwrlock", "rwlock", clock, t, [&] { return real().rw_trywrlock(l); });
}
RACELAB_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* l) {
  int rc = real().rw_unlock(l);
  if (rc == 0 && controlled()) released(l);
  return rc;
}

// --- spin locks ---
RACELAB_EXPORT int pthread_spin_lock(pthread_spinlock_t* l) {
  if (!controlled()) return real().spin_lock(l);
  return acquire(key(l), "pthread_spin_lock", "spin lock", [&] { return real().spin_trylock(l); });
}
RACELAB_EXPORT int pthread_spin_trylock(pthread_spinlock_t* l) {
  if (!controlled()) return real().spin_trylock(l);
  engine([&] { g_sched->on_point("pthread_spin_trylock"); });
  return real().spin_trylock(l);
}
RACELAB_EXPORT int pthread_spin_unlock(pthread_spinlock_t* l) {
  int rc = real().spin_unlock(l);
  if (rc == 0 && controlled()) released(key(l));
  return rc;
}

// --- barriers ---
RACELAB_EXPORT int pthread_barrier_init(pthread_barrier_t* b, const pthread_barrierattr_t* attr, unsigned count) {
  int rc = real().barrier_init(b, attr, count);
  if (rc == 0) with_objects([&](Objects& o) {
      o.barriers[b] = Objects::Barrier{count, 0, 0};
      return 0;
    });
  return rc;
}
RACELAB_EXPORT int pthread_barrier_wait(pthread_barrier_t* b) {
  const bool known = with_objects([&](Objects& o) { return o.barriers.count(b) > 0; });
  if (!controlled() || !known) return real().barrier_wait(b);
  engine([&] { g_sched->on_point("pthread_barrier_wait"); });
  // The shim waits in place of the C library's barrier: it tells TSan what
  // the barrier orders, everything before it in every thread before
  // everything after it, as the real one would.
  if (AnnotateHappensBefore != nullptr) AnnotateHappensBefore(__FILE__, __LINE__, b);
  uint64_t gen = 0;
  const bool last = with_objects([&](Objects& o) {
    auto& s = o.barriers[b];
    gen = s.generation;
    if (++s.arrived < s.count) return false;
    s.arrived = 0;
    ++s.generation;
    return true;
  });
  if (last) {
    engine([&] { g_sched->on_release(b); });
    if (AnnotateHappensAfter != nullptr) AnnotateHappensAfter(__FILE__, __LINE__, b);
    return PTHREAD_BARRIER_SERIAL_THREAD;
  }
  while (with_objects([&](Objects& o) { return o.barriers[b].generation == gen; })) {
    note_waiting(tl.id, b, "barrier");
    engine([&] { g_sched->on_block(b, "pthread_barrier_wait"); });
  }
  note_waiting(tl.id, nullptr, nullptr);
  if (AnnotateHappensAfter != nullptr) AnnotateHappensAfter(__FILE__, __LINE__, b);
  return 0;
}

// --- once ---
RACELAB_EXPORT int pthread_once(pthread_once_t* once, void (*init)()) {
  if (!controlled()) return real().once(once, init);
  engine([&] { g_sched->on_point("pthread_once"); });
  for (;;) {
    // 0: nobody started it under control (it may be done already: the C
    // library's own once then returns at once); 1: another thread runs it.
    const int state = with_objects([&](Objects& o) {
      int& s = o.once[once];
      if (s == 0) s = *once == PTHREAD_ONCE_INIT ? 1 : 2;
      else if (s == 1) return -1;
      return s;
    });
    if (state == 2) return real().once(once, noop);
    if (state == 1) break;
    note_waiting(tl.id, once, "pthread_once of");
    engine([&] { g_sched->on_block(once, "pthread_once"); });
    note_waiting(tl.id, nullptr, nullptr);
  }
  init();
  real().once(once, noop);  // the C library's control now says done
  with_objects([&](Objects& o) { return o.once[once] = 2; });
  engine([&] { g_sched->on_release(once); });
  return 0;
}

// --- semaphores ---
RACELAB_EXPORT int sem_wait(sem_t* s) {
  if (!controlled()) return real().sem_wait(s);
  // A cancellation point (preload/cancel.h): checked on entry and each time the wait ends.
  cancel_point();
  int rc = acquire(s, "sem_wait", "semaphore", [&] {
    const int got = sem_result(real().sem_trywait(s));
    if (got == EBUSY) {
      note_waiting(tl.id, nullptr, nullptr);
      cancel_point();
    }
    return got;
  });
  note_owner(s, -1);  // a semaphore has no owner
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return 0;
}
RACELAB_EXPORT int sem_trywait(sem_t* s) {
  if (!controlled()) return real().sem_trywait(s);
  engine([&] { g_sched->on_point("sem_trywait"); });
  return real().sem_trywait(s);
}
namespace {
int sem_wait_until(sem_t* s, clockid_t clock, const struct timespec* t) {
  cancel_point();  // a cancellation point, as sem_wait's: on entry and each time the wait ends
  int rc = acquire_timed(s, "sem_timedwait", "semaphore", clock, t, [&] {
    const int got = sem_result(real().sem_trywait(s));
    if (got == EBUSY) cancel_point();
    return got;
  });
  note_owner(s, -1);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return 0;
}
}  // namespace
RACELAB_EXPORT int sem_timedwait(sem_t* s, const struct timespec* t) {
  if (!controlled()) return real().sem_timedwait(s, t);
  return sem_wait_until(s, CLOCK_REALTIME, t);
}
RACELAB_EXPORT int sem_clockwait(sem_t* s, clockid_t clock, const struct timespec* t) {
  if (!controlled()) return real().sem_clockwait(s, clock, t);
  return sem_wait_until(s, clock, t);
}
RACELAB_EXPORT int sem_post(sem_t* s) {
  int rc = real().sem_post(s);
  if (rc == 0 && controlled()) engine([&] { g_sched->on_release(s); });
  return rc;
}
