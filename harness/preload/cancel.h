// preload/cancel.h -- pthread_cancel under control: deferred cancellation at
// the shim's cancellation points.
//
// A managed thread never waits in the C library: it waits in the scheduler
// (a pthread_cond_wait, a sleep, a join are steps there), where glibc's
// cancellation cannot reach it. So pthread_cancel is interposed: it is a
// step, it marks the target cancelled in the C library (the real
// pthread_cancel, so the C library's own cancellation points -- read, write,
// open... -- act on it as natively) and here, and it ends the target's wait
// in the scheduler (Scheduler::interrupt) when the target can be cancelled
// now (its cancel state is enabled). The target then reaches the
// cancellation point of the call it was in, cancel_point() below, which acts
// as glibc does: the thread is unwound with its cleanup handlers
// (pthread_cleanup_push) and ends with PTHREAD_CANCELED. A condition wait
// re-acquires its mutex first, as POSIX requires, so a cleanup handler that
// unlocks it is right.
//
// The shim's cancellation points: pthread_cond_wait (and cnd_wait),
// pthread_join (and thrd_join), sem_wait, sleep, usleep, nanosleep,
// clock_nanosleep (and thrd_sleep), pause and pthread_testcancel.
// Asynchronous cancellation (pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS))
// is not supported: it would unwind a thread anywhere, the scheduler's own
// code included; a program that asks for it under control ends its trial as
// bad input (exit 3), saying so.
#ifndef RACELAB_PRELOAD_CANCEL_H_
#define RACELAB_PRELOAD_CANCEL_H_

namespace racelab::preload {

// At a cancellation point of an interposed call, outside the shim (depth 0):
// a pending cancel of the calling managed thread acts here (and this does not
// return); with none, or with its cancel state disabled, it returns at once.
void cancel_point();

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_CANCEL_H_
