// preload/unseen.h -- synchronisation the program did outside racelab's
// control during a trial, counted per call and reported with the trial
// (the report's "unseen_sync", engine/exec_protocol.h).
//
// A search (dpor, dfs) explores the orders of the steps it sees; a wait or a
// wake-up it does not see orders threads behind its back, and a search that
// missed it is no proof. So every such call is named and counted, the worker
// warns of it, and the cell's verdict is never "complete" over it
// (engine/cell.cpp). Counted:
//  - an interposed call (a lock, a wait, a create...) made by a thread racelab
//    does not manage while a trial runs: a thread started before main or by
//    the C library ("pthread_mutex_lock from an unmanaged thread");
//  - calls with no scheduling of their own, which pass through to the C
//    library: futex system calls (std::atomic::wait, std::latch,
//    std::counting_semaphore), sigwait, sigwaitinfo, sigtimedwait,
//    sigsuspend, pause with no timer armed, SIGEV_THREAD timers.
#ifndef RACELAB_PRELOAD_UNSEEN_H_
#define RACELAB_PRELOAD_UNSEEN_H_

#include <nlohmann/json.hpp>

namespace racelab::preload {

// `call` outlives the trial (a string literal or __builtin_FUNCTION()).
void note_unseen(const char* call, bool unmanaged_thread = false);
// An interposed call made by a thread racelab does not manage, from `caller`.
// Not counted when the caller is the unwinder (libgcc_s): a cancelled thread
// unwinds past its end in the scheduler, and the unwinder's own once-only
// set-up is no synchronisation of the program's.
void note_unmanaged(const char* call, const void* caller);
// {"CALL": count, ...}; empty when there was none.
nlohmann::json unseen_calls();

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_UNSEEN_H_
