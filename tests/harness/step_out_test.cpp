// A managed thread that waits for something outside the schedule (another
// process, a thread racelab does not manage) steps out first
// (Scheduler::step_out, the host's racelab_host_step_out): the others run
// while it waits for real, and it rejoins at its next call. Driven directly,
// as the Python host drives it around multiprocessing's waits.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "engine/scheduler.h"
#include "engine/strategy.h"
#include "two_managed_threads.h"

using racelab::Scheduler;
using racelab::testing::kSecond;
using racelab::testing::non_preemptive;
using racelab::testing::run_two;

namespace {

// A real wait for `flag`, bounded so that a broken step_out fails the test
// instead of hanging it. True when the flag came.
bool wait_for_real(const std::atomic<bool>& flag) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST(StepOut, TheOthersRunWhileAThreadThatSteppedOutWaitsForReal) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  std::atomic<bool> done{false};
  bool came = false;
  run_two(
      s,
      [&](int) {
        s.on_point("before the wait");
        s.step_out("Connection.recv");
        came = wait_for_real(done);  // the child must run meanwhile: nothing preempts this thread
        s.on_point("after the wait");  // rejoins
      },
      [&] {
        s.on_point("work");
        done = true;
        s.on_point("more work");
      });
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  EXPECT_TRUE(came) << "the thread that stepped out held the turn: the other never ran";
  bool recorded = false;
  for (const auto& d : s.take_decisions()) recorded = recorded || d.let_go;
  EXPECT_TRUE(recorded) << "the step out is not recorded as a let-go step (a replay must say determinism was lost)";
}

TEST(StepOut, StepsOutWhenNobodyElseCanRunYetAndASleeperStillWakes) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  std::atomic<bool> woke{false};
  bool came = false;
  run_two(
      s,
      [&](int) {
        s.on_yield("let the child start");  // it runs to its sleep
        // The child sleeps 5 s of logical time: nobody can run now but this
        // thread, which waits for real for what the child does on waking.
        s.step_out("multiprocessing's exit");
        came = wait_for_real(woke);
      },
      [&] {
        s.on_sleep("time.sleep", 5 * kSecond);
        woke = true;
      });
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  EXPECT_TRUE(came) << "the sleeper never woke while the other thread was out";
}

TEST(StepOut, OutsideATrialItChangesNothing) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  s.step_out("not a managed thread");  // the caller is not managed: nothing to hand over
  EXPECT_FALSE(s.aborted());
}
