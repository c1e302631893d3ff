#include "preload/real.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace racelab::preload {

namespace {

Real g_real;
bool g_loaded = false;

template <class F>
void find(F** slot, const char* name) {
  void* p = ::dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    // Without the real call the program cannot run at all: say which.
    std::fprintf(stderr, "racelab preload: the C library has no %s\n", name);
    std::abort();
  }
  *slot = reinterpret_cast<F*>(p);
}

void load() {
  Real& r = g_real;
  find(&r.libc_start_main, "__libc_start_main");
  find(&r.create, "pthread_create");
  find(&r.join, "pthread_join");
  find(&r.timedjoin, "pthread_timedjoin_np");
  find(&r.clockjoin, "pthread_clockjoin_np");
  find(&r.tryjoin, "pthread_tryjoin_np");
  find(&r.detach, "pthread_detach");
  find(&r.exit, "pthread_exit");
  find(&r.mutex_lock, "pthread_mutex_lock");
  find(&r.mutex_trylock, "pthread_mutex_trylock");
  find(&r.mutex_timedlock, "pthread_mutex_timedlock");
  find(&r.mutex_clocklock, "pthread_mutex_clocklock");
  find(&r.mutex_unlock, "pthread_mutex_unlock");
  find(&r.cond_wait, "pthread_cond_wait");
  find(&r.cond_timedwait, "pthread_cond_timedwait");
  find(&r.cond_clockwait, "pthread_cond_clockwait");
  find(&r.cond_signal, "pthread_cond_signal");
  find(&r.cond_broadcast, "pthread_cond_broadcast");
  find(&r.rw_rdlock, "pthread_rwlock_rdlock");
  find(&r.rw_tryrdlock, "pthread_rwlock_tryrdlock");
  find(&r.rw_timedrdlock, "pthread_rwlock_timedrdlock");
  find(&r.rw_clockrdlock, "pthread_rwlock_clockrdlock");
  find(&r.rw_wrlock, "pthread_rwlock_wrlock");
  find(&r.rw_trywrlock, "pthread_rwlock_trywrlock");
  find(&r.rw_timedwrlock, "pthread_rwlock_timedwrlock");
  find(&r.rw_clockwrlock, "pthread_rwlock_clockwrlock");
  find(&r.rw_unlock, "pthread_rwlock_unlock");
  find(&r.spin_lock, "pthread_spin_lock");
  find(&r.spin_trylock, "pthread_spin_trylock");
  find(&r.spin_unlock, "pthread_spin_unlock");
  find(&r.barrier_init, "pthread_barrier_init");
  find(&r.barrier_wait, "pthread_barrier_wait");
  find(&r.once, "pthread_once");
  find(&r.sem_wait, "sem_wait");
  find(&r.sem_trywait, "sem_trywait");
  find(&r.sem_timedwait, "sem_timedwait");
  find(&r.sem_clockwait, "sem_clockwait");
  find(&r.sem_post, "sem_post");
  find(&r.sched_yield, "sched_yield");
  find(&r.nanosleep, "nanosleep");
  find(&r.clock_nanosleep, "clock_nanosleep");
  find(&r.usleep, "usleep");
  find(&r.sleep, "sleep");
  find(&r.clock_gettime, "clock_gettime");
  find(&r.gettimeofday, "gettimeofday");
  find(&r.time, "time");
  find(&r.timespec_get, "timespec_get");
  find(&r.cancel, "pthread_cancel");
  find(&r.testcancel, "pthread_testcancel");
  find(&r.setcancelstate, "pthread_setcancelstate");
  find(&r.setcanceltype, "pthread_setcanceltype");
  find(&r.alarm, "alarm");
  find(&r.setitimer, "setitimer");
  find(&r.getitimer, "getitimer");
  find(&r.timer_create, "timer_create");
  find(&r.timer_settime, "timer_settime");
  find(&r.timer_gettime, "timer_gettime");
  find(&r.timer_getoverrun, "timer_getoverrun");
  find(&r.timer_delete, "timer_delete");
  find(&r.pause, "pause");
  find(&r.sigsuspend, "sigsuspend");
  find(&r.sigwait, "sigwait");
  find(&r.sigwaitinfo, "sigwaitinfo");
  find(&r.sigtimedwait, "sigtimedwait");
  find(&r.syscall, "syscall");
  g_loaded = true;
}

// Before any other constructor of the program can call in (priority 101 runs first).
__attribute__((constructor(101))) void load_early() {
  if (!g_loaded) load();
}

}  // namespace

const Real& real() {
  if (__builtin_expect(!g_loaded, 0)) load();
  return g_real;
}

}  // namespace racelab::preload
