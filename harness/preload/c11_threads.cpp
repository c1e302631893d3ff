// preload/c11_threads.cpp -- C11 <threads.h> under control.
//
// glibc builds thrd_*, mtx_*, cnd_* and call_once on its pthread functions,
// but calls them inside the library (__pthread_mutex_lock and the like),
// where the shim's interposed pthread_mutex_lock is never reached: a program
// written with <threads.h> ran its threads uncontrolled, and `dpor` called a
// search of one schedule complete. So the C11 calls that synchronise are
// interposed here and routed through the shim's own pthread functions
// (preload/locks.cpp, threads.cpp, time.cpp), which are steps of the engine.
//
// The types allow it: in glibc mtx_t and cnd_t are unions the size and
// alignment of pthread_mutex_t and pthread_cond_t, and hold one (mtx_init
// and cnd_init are __pthread_mutex_init and __pthread_cond_init on them);
// thrd_t is pthread_t and once_flag wraps a pthread_once_t. What does not
// synchronise is left to the C library: mtx_init, mtx_destroy, cnd_init,
// cnd_destroy (they only set up or check memory), thrd_current, thrd_equal
// and tss_* (pthread_key_create and friends, thread-local data: no order
// between threads). A timed wait forwards to the pthread timed call, so it
// times out on the same clock as pthread_cond_timedwait does (REALTIME).
#include <errno.h>
#include <pthread.h>
#include <threads.h>
#include <time.h>

#include <cstdint>

#include "preload/control.h"

namespace racelab::preload {

namespace {

// glibc's thrd_err_map (sysdeps/pthread/thrd_priv.h): an errno to a thrd_ result.
int c11_result(int err) {
  switch (err) {
    case 0: return thrd_success;
    case ENOMEM: return thrd_nomem;
    case ETIMEDOUT: return thrd_timedout;
    case EBUSY: return thrd_busy;
    default: return thrd_error;
  }
}

struct C11Start {
  thrd_start_t fn;
  void* arg;
};

// A C11 thread's body returns int; pthread's returns void*. glibc marks its
// C11 threads to convert the result; a thread started through
// pthread_create converts it here, and thrd_join converts it back.
void* c11_trampoline(void* p) {
  C11Start s = *static_cast<C11Start*>(p);
  {
    Inside in;
    delete static_cast<C11Start*>(p);
  }
  return reinterpret_cast<void*>(static_cast<intptr_t>(s.fn(s.arg)));
}

pthread_mutex_t* as_pthread(mtx_t* m) { return reinterpret_cast<pthread_mutex_t*>(m); }
pthread_cond_t* as_pthread(cnd_t* c) { return reinterpret_cast<pthread_cond_t*>(c); }

static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t) && alignof(mtx_t) == alignof(pthread_mutex_t));
static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t) && alignof(cnd_t) == alignof(pthread_cond_t));
static_assert(sizeof(thrd_t) == sizeof(pthread_t));
static_assert(sizeof(once_flag) == sizeof(pthread_once_t));

}  // namespace

}  // namespace racelab::preload

using namespace racelab::preload;

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

// --- threads ---
RACELAB_EXPORT int thrd_create(thrd_t* thr, thrd_start_t fn, void* arg) {
  C11Start* s;
  {
    Inside in;
    s = new C11Start{fn, arg};
  }
  const int rc = pthread_create(reinterpret_cast<pthread_t*>(thr), nullptr, c11_trampoline, s);
  if (rc != 0) {
    Inside in;
    delete s;
  }
  return c11_result(rc);
}
RACELAB_EXPORT int thrd_join(thrd_t thr, int* res) {
  void* ret = nullptr;
  const int rc = pthread_join(static_cast<pthread_t>(thr), &ret);
  if (rc == 0 && res != nullptr) *res = static_cast<int>(reinterpret_cast<intptr_t>(ret));
  return c11_result(rc);
}
RACELAB_EXPORT int thrd_detach(thrd_t thr) { return c11_result(pthread_detach(static_cast<pthread_t>(thr))); }
RACELAB_EXPORT void thrd_exit(int res) {
  pthread_exit(reinterpret_cast<void*>(static_cast<intptr_t>(res)));
}
// 0 when slept, -1 when a signal cut it short, another negative value on an error (C11 7.26.5.7).
RACELAB_EXPORT int thrd_sleep(const struct timespec* duration, struct timespec* remaining) {
  switch (clock_nanosleep(CLOCK_REALTIME, 0, duration, remaining)) {
    case 0: return 0;
    case EINTR: return -1;
    default: return -2;
  }
}
// thrd_yield: preload/time.cpp, beside sched_yield.

// --- mutexes ---
RACELAB_EXPORT int mtx_lock(mtx_t* m) { return c11_result(pthread_mutex_lock(as_pthread(m))); }
RACELAB_EXPORT int mtx_trylock(mtx_t* m) { return c11_result(pthread_mutex_trylock(as_pthread(m))); }
RACELAB_EXPORT int mtx_timedlock(mtx_t* __restrict m, const struct timespec* __restrict deadline) {
  return c11_result(pthread_mutex_timedlock(as_pthread(m), deadline));
}
RACELAB_EXPORT int mtx_unlock(mtx_t* m) { return c11_result(pthread_mutex_unlock(as_pthread(m))); }

// --- condition variables ---
RACELAB_EXPORT int cnd_wait(cnd_t* c, mtx_t* m) { return c11_result(pthread_cond_wait(as_pthread(c), as_pthread(m))); }
RACELAB_EXPORT int cnd_timedwait(cnd_t* __restrict c, mtx_t* __restrict m, const struct timespec* __restrict deadline) {
  return c11_result(pthread_cond_timedwait(as_pthread(c), as_pthread(m), deadline));
}
RACELAB_EXPORT int cnd_signal(cnd_t* c) { return c11_result(pthread_cond_signal(as_pthread(c))); }
RACELAB_EXPORT int cnd_broadcast(cnd_t* c) { return c11_result(pthread_cond_broadcast(as_pthread(c))); }

// --- once ---
RACELAB_EXPORT void call_once(once_flag* flag, void (*fn)(void)) {
  pthread_once(reinterpret_cast<pthread_once_t*>(flag), fn);
}
