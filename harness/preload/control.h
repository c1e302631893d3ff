// preload/control.h -- the state of the shim in a trial process: the engine's
// Scheduler that decides, which threads it manages, and how a trial ends.
//
// Every interposed call asks controlled() first. False -- no trial, a thread
// the scheduler does not manage (the shim's watchdog), or a call the shim
// makes itself (inside the engine, `depth` > 0) -- and the call goes straight
// to the C library. True, and the call becomes a scheduling step of the one
// engine (engine/scheduler.h): exactly one managed thread runs at a time.
#ifndef RACELAB_PRELOAD_CONTROL_H_
#define RACELAB_PRELOAD_CONTROL_H_

#include <atomic>
#include <string>

#include <pthread.h>
#include <time.h>

#include "engine/exec_protocol.h"
#include "engine/scheduler.h"

// ThreadSanitizer's annotations (tsan_interface_ann): null unless the program
// was built with -fsanitize=thread, whose run-time defines them.
extern "C" {
void AnnotateIgnoreSyncBegin(const char* file, int line) __attribute__((weak));
void AnnotateIgnoreSyncEnd(const char* file, int line) __attribute__((weak));
void AnnotateIgnoreReadsBegin(const char* file, int line) __attribute__((weak));
void AnnotateIgnoreReadsEnd(const char* file, int line) __attribute__((weak));
void AnnotateIgnoreWritesBegin(const char* file, int line) __attribute__((weak));
void AnnotateIgnoreWritesEnd(const char* file, int line) __attribute__((weak));
void AnnotateHappensBefore(const char* file, int line, const volatile void* addr) __attribute__((weak));
void AnnotateHappensAfter(const char* file, int line, const volatile void* addr) __attribute__((weak));
}

namespace racelab::preload {

struct ThreadState {
  bool managed = false;
  int id = -1;     // the scheduler's id for this thread
  int depth = 0;   // > 0 while the shim itself runs on this thread
};

// initial-exec: a preloaded library has static TLS, and the fast path must not
// call __tls_get_addr.
extern thread_local ThreadState tl __attribute__((tls_model("initial-exec")));

extern Scheduler* g_sched;          // the trial's scheduler; never freed
extern std::atomic<bool> g_active;  // a controlled trial is running in this process
extern ExecReport* g_report;        // where the trial's report goes

// preload/unseen.h: a call a thread racelab does not manage made (`caller`: its return address).
void note_unmanaged(const char* call, const void* caller);

// `call`: the interposed function asking, and `caller` where it was called
// from (for the count of synchronisation racelab did not see: a thread it
// does not manage made it).
inline bool controlled(const char* call = __builtin_FUNCTION(), const void* caller = __builtin_return_address(0)) {
  if (!g_active.load(std::memory_order_relaxed) || tl.depth != 0) return false;
  if (__builtin_expect(tl.managed, 1)) return true;
  note_unmanaged(call, caller);
  return false;
}

// The scheduler's own lock and hand-offs order the program's threads, but
// they are not the program's synchronisation. A program built with
// ThreadSanitizer would take that order for its own: a race in it would show
// in some schedules and hide in others, a "holds" that racelab made. So while
// the shim works on a thread, TSan ignores the synchronisation it sees there,
// and the memory the shim's calls touch (memmove, memcpy and the like, which
// TSan checks wherever they are called from, would otherwise race with
// nothing ordering them). The real pthread calls a hook passes on (a lock, a
// create, a join) are made outside: they stay the program's own.
inline void unseen_by_tsan(bool on) {
  if (AnnotateIgnoreSyncBegin == nullptr) return;  // not a TSan build
  if (on) {
    AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  } else {
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
    AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
  }
}

// The shim's own work starts (depth 0 -> 1) and ends on this thread.
inline void enter_shim() {
  if (tl.depth++ == 0) unseen_by_tsan(true);
}
inline void leave_shim() {
  if (--tl.depth == 0) unseen_by_tsan(false);
}

// Marks the shim's own work on this thread: the pthread calls the engine makes
// (its own mutex and condition variables) go to the C library, unseen by TSan.
struct Inside {
  Inside() { enter_shim(); }
  ~Inside() { leave_shim(); }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

// Runs f, which calls the scheduler. The scheduler abandons a trial (a
// deadlock, a divergence, the step limit) by throwing TrialAborted; C frames
// cannot be unwound, so the trial process reports and ends right here.
[[noreturn]] void end_aborted();
extern std::atomic<bool> g_timers_armed;  // preload/signals.h
void fire_due_timers();
template <class F>
void engine(F f) {
  {
    Inside in;
    try {
      f();
    } catch (const TrialAborted&) {
      end_aborted();
    }
  }
  // A logical timer whose time has come fires at this step, outside the shim
  // (its handler is the program's own code).
  if (__builtin_expect(g_timers_armed.load(std::memory_order_relaxed), 0)) fire_due_timers();
}

// Writes the trial's report once (engine/exec_protocol.h). A second caller
// returns false (and, when the trial is over, should wait for the first to end it).
bool write_report(bool aborted, const std::string& outcome, const std::string& detail, int64_t failing_step);

// What the deadlock message names: who holds which lock, who waits for what.
// `kind` is a string literal ("mutex", "rwlock", "condition variable", ...).
void note_owner(const void* lock, int thread);  // thread -1: released
int owner_of(const void* lock);                 // -1: none noted
void note_waiting(int thread, const void* object, const char* kind);  // object null: no longer waits
// "thread 1 waits for mutex lock_a held by thread 2; ...", with the
// lock-order cycle first when there is one.
std::string describe_waits();

// The managed id of a thread that a managed thread started (preload/threads.cpp), -1 for any other.
int managed_id_of(pthread_t thread);

// The trial's clocks (preload/time.cpp): logical from base_ns (REALTIME at
// the trial's start), or the real ones when `on` is false.
void set_logical_clock(bool on, int64_t base_ns);
// A timed wait's deadline, an absolute time on `clock`, as the scheduler's
// logical time (Scheduler::on_block_until): on the logical clock when the
// clocks are logical, else the time left on the real clock from now. Call it
// from the program's side (outside Inside). INT64_MAX: no deadline (null);
// -1: an invalid timespec (the caller answers EINVAL, as the C library does).
int64_t logical_deadline(clockid_t clock, const struct timespec* deadline);
// The knob real_time: the program's time is the real one -- clocks, sleeps
// (they last their real time) and timers (preload/signals.h).
void set_real_time(bool on);
bool real_time();

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_CONTROL_H_
