#include "engine/handoff.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>

namespace racelab {
namespace {

long futex(std::atomic<uint32_t>* word, int op, uint32_t value) {
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op | FUTEX_PRIVATE_FLAG, value, nullptr, nullptr, 0);
}

// How long a waiter spins before it sleeps: long enough to cover the other
// thread's step (well under a microsecond) and its wake-up on another core.
// The spin yields the CPU on every round instead of pausing: on a loaded
// machine (more runnable threads than cores, as on a 2-core box running a
// build beside racelab) a pausing spinner holds the very core the thread it
// waits for needs, and a switch measured 10-30x slower than with yields; on
// an idle core sched_yield returns at once and the spin stays a spin. Only
// the thread that just handed the turn over spins; the others sleep.
constexpr auto kSpin = std::chrono::microseconds(20);

}  // namespace

void Handoff::signal() {
  if (word_.exchange(1, std::memory_order_seq_cst) == 2) futex(&word_, FUTEX_WAKE, INT_MAX);
}

void Handoff::wait() {
  if (word_.load(std::memory_order_acquire) == 1) return;
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    if (word_.load(std::memory_order_acquire) == 1) return;
    // The system call itself: in the exec host's preload library the
    // sched_yield symbol is the program's interposed one.
    ::syscall(SYS_sched_yield);
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  uint32_t expected = 0;
  if (!word_.compare_exchange_strong(expected, 2, std::memory_order_seq_cst) && expected == 1) return;
  while (word_.load(std::memory_order_acquire) == 2) futex(&word_, FUTEX_WAIT, 2);
}

}  // namespace racelab
