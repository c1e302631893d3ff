// preload/real.h -- the C library's own versions of every call the shim
// interposes, found with dlsym(RTLD_NEXT): what an interposed call does when
// the calling thread is not under control, and what the shim itself uses.
#ifndef RACELAB_PRELOAD_REAL_H_
#define RACELAB_PRELOAD_REAL_H_

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

namespace racelab::preload {

struct Real {
  int (*libc_start_main)(int (*)(int, char**, char**), int, char**, void (*)(), void (*)(), void (*)(), void*);
  int (*create)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  int (*join)(pthread_t, void**);
  int (*timedjoin)(pthread_t, void**, const struct timespec*);
  int (*clockjoin)(pthread_t, void**, clockid_t, const struct timespec*);
  int (*tryjoin)(pthread_t, void**);
  int (*detach)(pthread_t);
  void (*exit)(void*);  // never returns
  int (*mutex_lock)(pthread_mutex_t*);
  int (*mutex_trylock)(pthread_mutex_t*);
  int (*mutex_timedlock)(pthread_mutex_t*, const struct timespec*);
  int (*mutex_clocklock)(pthread_mutex_t*, clockid_t, const struct timespec*);
  int (*mutex_unlock)(pthread_mutex_t*);
  int (*cond_wait)(pthread_cond_t*, pthread_mutex_t*);
  int (*cond_timedwait)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
  int (*cond_clockwait)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
  int (*cond_signal)(pthread_cond_t*);
  int (*cond_broadcast)(pthread_cond_t*);
  int (*rw_rdlock)(pthread_rwlock_t*);
  int (*rw_tryrdlock)(pthread_rwlock_t*);
  int (*rw_timedrdlock)(pthread_rwlock_t*, const struct timespec*);
  int (*rw_clockrdlock)(pthread_rwlock_t*, clockid_t, const struct timespec*);
  int (*rw_wrlock)(pthread_rwlock_t*);
  int (*rw_trywrlock)(pthread_rwlock_t*);
  int (*rw_timedwrlock)(pthread_rwlock_t*, const struct timespec*);
  int (*rw_clockwrlock)(pthread_rwlock_t*, clockid_t, const struct timespec*);
  int (*rw_unlock)(pthread_rwlock_t*);
  int (*spin_lock)(pthread_spinlock_t*);
  int (*spin_trylock)(pthread_spinlock_t*);
  int (*spin_unlock)(pthread_spinlock_t*);
  int (*barrier_init)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned);
  int (*barrier_wait)(pthread_barrier_t*);
  int (*once)(pthread_once_t*, void (*)());
  int (*sem_wait)(sem_t*);
  int (*sem_trywait)(sem_t*);
  int (*sem_timedwait)(sem_t*, const struct timespec*);
  int (*sem_clockwait)(sem_t*, clockid_t, const struct timespec*);
  int (*sem_post)(sem_t*);
  int (*sched_yield)();
  int (*nanosleep)(const struct timespec*, struct timespec*);
  int (*clock_nanosleep)(clockid_t, int, const struct timespec*, struct timespec*);
  int (*usleep)(useconds_t);
  unsigned (*sleep)(unsigned);
  int (*clock_gettime)(clockid_t, struct timespec*);
  int (*gettimeofday)(struct timeval*, void*);
  time_t (*time)(time_t*);
  int (*timespec_get)(struct timespec*, int);
  // Cancellation (preload/cancel.cpp).
  int (*cancel)(pthread_t);
  void (*testcancel)();
  int (*setcancelstate)(int, int*);
  int (*setcanceltype)(int, int*);
  // Timers and signal waits (preload/signals.cpp).
  unsigned (*alarm)(unsigned);
  int (*setitimer)(int, const struct itimerval*, struct itimerval*);
  int (*getitimer)(int, struct itimerval*);
  int (*timer_create)(clockid_t, struct sigevent*, timer_t*);
  int (*timer_settime)(timer_t, int, const struct itimerspec*, struct itimerspec*);
  int (*timer_gettime)(timer_t, struct itimerspec*);
  int (*timer_getoverrun)(timer_t);
  int (*timer_delete)(timer_t);
  int (*pause)();
  int (*sigsuspend)(const sigset_t*);
  int (*sigwait)(const sigset_t*, int*);
  int (*sigwaitinfo)(const sigset_t*, siginfo_t*);
  int (*sigtimedwait)(const sigset_t*, siginfo_t*, const struct timespec*);
  long (*syscall)(long, long, long, long, long, long, long);
};

// Filled on first use (and by the library's constructor); never null after.
const Real& real();

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_REAL_H_
