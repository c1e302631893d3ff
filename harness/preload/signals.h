// preload/signals.h -- timers that raise signals, on the trial's logical time.
//
// Under control no real time passes in a sleep (preload/time.cpp), so a real
// alarm(1) never fired in a trial whose threads wait for it with a sleep
// loop. So alarm, setitimer(ITIMER_REAL) and timer_create (CLOCK_REALTIME,
// MONOTONIC or BOOTTIME, with SIGEV_SIGNAL or SIGEV_NONE) are kept here on the
// scheduler's logical time (Scheduler::now_ns): a timer fires at the first
// scheduling step of a managed thread after its deadline has passed there.
// Its signal is raised on that thread with the real tgkill (with the timer's
// value, as the kernel's would carry it, for timer_create), or sent to the
// process with the real kill/rt_sigqueueinfo when that thread blocks it, so
// the kernel delivers it to a thread that does not. A sleep whose deadline
// is past a timer's sleeps until the timer fires, and returns early (EINTR)
// when a handler ran on its thread, as it would natively. The times depend on
// the schedule only, so a replay fires the same signal at the same step.
//
// With --real-time (the knob real_time) the timers are the real ones, and
// sleeps last their real time (preload/time.cpp). A SIGEV_THREAD timer runs
// its function on a thread the C library starts, which racelab does not
// manage: it is the real one, and counted as synchronisation racelab did not
// see (preload/unseen.h).
#ifndef RACELAB_PRELOAD_SIGNALS_H_
#define RACELAB_PRELOAD_SIGNALS_H_

#include <atomic>
#include <cstdint>

namespace racelab::preload {

// Some logical timer is armed: the engine's calls check for due ones (control.h).
extern std::atomic<bool> g_timers_armed;

// On a managed thread at depth 0 that runs now: fires every timer whose
// deadline has passed on logical time.
void fire_due_timers();

// Logical ns from now until the first armed timer fires; INT64_MAX when none
// is armed (or the timers are real).
int64_t timer_due_in_ns();

// How many signal handlers a fired timer ran on this thread so far: a sleep
// compares it before and after to know whether it was interrupted.
uint64_t handlers_run_here();

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_SIGNALS_H_
