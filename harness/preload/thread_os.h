// preload/thread_os.h -- the program's managed threads as the OS sees them.
//
// The watchdog judges a thread by what the thread itself did, never by the
// wall clock: the CPU time it used since its last scheduling step (its own
// CPU clock) and whether the kernel has it asleep. On a loaded machine a
// thread that waits for a core uses no CPU time, so it is never taken for a
// thread in an uncontrolled wait; one that spins uses CPU time at the same
// rate per step however busy the machine is.
//
// Messages say where a thread is: its kernel state, the system call it sleeps
// in, and its innermost frames (a signal makes the thread take its own
// backtrace; the names come from preload/symbols.h).
#ifndef RACELAB_PRELOAD_THREAD_OS_H_
#define RACELAB_PRELOAD_THREAD_OS_H_

#include <cstdint>
#include <string>

#include "engine/trial.h"

namespace racelab::preload {

// Managed thread ids run from 0 (main) to kMaxThreadId (engine/trial.h): a
// program that creates more threads is refused (preload/threads.cpp).

// On the thread itself, once it is managed thread `id`.
void note_thread_started(int id);
// On the thread itself, as it ends (its body returned or it called pthread_exit).
void note_thread_ended(int id);
bool thread_has_ended(int id);

// Around a wait the shim itself makes for a managed thread and knows will
// end (joining a thread that has ended in the scheduler but not yet in the
// OS): the watchdog does not take that sleep for an uncontrolled wait.
class KnownWait {
 public:
  explicit KnownWait(int id);
  ~KnownWait();
  KnownWait(const KnownWait&) = delete;
  KnownWait& operator=(const KnownWait&) = delete;

 private:
  int id_;
};

struct ThreadNow {
  bool known = false;   // started and not ended
  int64_t cpu_ns = 0;   // its CPU clock
  char state = '?';     // the kernel's: R running or runnable, S asleep, D in I/O, ...
  long syscall = -1;    // the system call it is in, when asleep (-1: none or unknown)
  bool known_wait = false;  // inside a KnownWait
};
ThreadNow thread_now(int id);

// "sleeps in futex" / "runs" and, where the thread answers the signal in
// time, "in spin_on_flag+0x12 <- worker+0x40 <- start_thread" (innermost first).
std::string where_is(int id);

// Installs the signal handler where_is() needs and takes one backtrace ahead
// (the first one loads the unwinder). Once per trial process, before main.
void prepare_thread_os();

}  // namespace racelab::preload

#endif  // RACELAB_PRELOAD_THREAD_OS_H_
