// engine/handoff.h -- a one-waiter wake-up: how the scheduler hands the turn
// to the thread it picked (engine/scheduler.h).
//
// Each managed thread owns one Handoff. It arms it, drops the scheduler's
// lock and waits; whoever picks it signals it. The waiter first spins some
// microseconds, yielding the CPU each round -- a switch between two threads
// then costs no wake-up in the kernel -- and only then sleeps in it (futex).
// The signaller makes the FUTEX_WAKE system call only when the waiter really
// sleeps. A condition variable would cost a lock round trip and
// a futex wake-up on every switch.
//
// Word: 0 armed (the waiter spins), 1 signalled, 2 the waiter sleeps.
#ifndef RACELAB_ENGINE_HANDOFF_H_
#define RACELAB_ENGINE_HANDOFF_H_

#include <atomic>
#include <cstdint>

namespace racelab {

class Handoff {
 public:
  // Called by the waiter before it drops the lock under which it decides to wait.
  void arm() { word_.store(0, std::memory_order_seq_cst); }
  // Called by anyone; wakes the waiter if it sleeps.
  void signal();
  // Returns once signalled (at once if signalled since arm()).
  void wait();
  // The word itself: arm(), then a seq_cst load of the state that decides
  // whether to wait, orders a signal against it (see Scheduler::wait_turn).
  bool signalled() const { return word_.load(std::memory_order_acquire) == 1; }

 private:
  std::atomic<uint32_t> word_{0};
};

}  // namespace racelab

#endif  // RACELAB_ENGINE_HANDOFF_H_
