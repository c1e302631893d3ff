// Waits with a timeout under the scheduler (Scheduler::on_block_until,
// on_join_until): they keep the program's contract on logical time. A wait
// ends as soon as what it waits for happens; it times out only when its
// deadline passes through the others' steps, or when nothing else can run.
// Driven directly, as a host (the preload shim, the Python host) drives it.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "engine/run_trial.h"
#include "engine/scheduler.h"
#include "engine/strategy.h"
#include "two_managed_threads.h"

using racelab::Scheduler;
using racelab::testing::kSecond;
using racelab::testing::non_preemptive;
using racelab::testing::run_two;


TEST(TimedWait, AJoinWithATimeoutReturnsWhenTheThreadEndsNotAtItsDeadline) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  bool ended = false;
  int64_t returned_at = -1;
  run_two(
      s,
      [&](int id) {
        ended = s.on_join_until(id, "Thread.join(timeout=60)", 60 * kSecond);
        returned_at = s.now_ns();
      },
      [&] {
        for (int i = 0; i < 5; ++i) s.on_point("work");
      });
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  EXPECT_TRUE(ended) << "the join timed out although the thread ended";
  EXPECT_LT(returned_at, kSecond) << "the join waited for its deadline";
  EXPECT_TRUE(s.fired_timeouts().empty());
}

TEST(TimedWait, AReleaseWakesATimedBlockBeforeItsDeadline) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  int resource = 0;
  bool woken = false;
  run_two(
      s, [&](int) { woken = s.on_block_until(&resource, "Lock.acquire(timeout=30)", 30 * kSecond); },
      [&] {
        s.on_point("work");
        s.on_release(&resource);
        s.on_point("more work");
      });
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  EXPECT_TRUE(woken);
  EXPECT_TRUE(s.fired_timeouts().empty());
  EXPECT_LT(s.now_ns(), kSecond);
}

// Nobody will release: the wait is the program's safety net, and it fires --
// when nothing else can run, at once in logical time (no real time passes),
// never as a deadlock -- and says so.
TEST(TimedWait, ATimeoutFiresWhenNothingElseCanRunAndIsRecorded) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  int resource = 0;
  bool woken = true;
  run_two(
      s, [&](int) { woken = s.on_block_until(&resource, "Event.wait(timeout=5)", 5 * kSecond); },
      [&] {
        for (int i = 0; i < 3; ++i) s.on_point("work");
      });
  EXPECT_FALSE(s.aborted()) << "a timed wait is no deadlock: " << s.abort_detail();
  EXPECT_FALSE(woken);
  EXPECT_GE(s.now_ns(), 5 * kSecond);
  auto fired = s.fired_timeouts();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].thread, 0);
  EXPECT_EQ(fired[0].what, "Event.wait(timeout=5)");
  EXPECT_EQ(fired[0].waited_ns, 5 * kSecond);
  EXPECT_TRUE(fired[0].nothing_else_ran);
}

// A short deadline passes through the others' steps (kStepNs each): the
// waiter runs again while the other still has work to do.
TEST(TimedWait, AShortDeadlinePassesThroughTheOthersSteps) {
  auto strategy = non_preemptive();
  Scheduler::Options options;
  options.fair_steps = 4;  // as the hosts run users' programs: a thread that can run gets its turn
  Scheduler s(strategy.get(), options);
  int resource = 0;
  std::atomic<int> child_steps{0};
  int child_steps_when_timed_out = -1;
  bool woken = true;
  run_two(
      s,
      [&](int) {
        woken = s.on_block_until(&resource, "Condition.wait(timeout=3e-05)", s.now_ns() + 3 * Scheduler::kStepNs);
        child_steps_when_timed_out = child_steps.load();
        s.on_yield("poll");  // lets the child finish
      },
      [&] {
        for (int i = 0; i < 50; ++i) {
          s.on_point("work");
          ++child_steps;
        }
      });
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  EXPECT_FALSE(woken);
  EXPECT_GE(child_steps_when_timed_out, 2);
  EXPECT_LT(child_steps_when_timed_out, 50) << "the deadline waited for the child to finish";
  auto fired = s.fired_timeouts();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_FALSE(fired[0].nothing_else_ran);
}

// Two threads each wait, with a timeout, for the other: of the two deadlines
// the earlier fires first, and only that one.
TEST(TimedWait, OfTwoTimedWaitersTheEarlierDeadlineFiresFirst) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  int a = 0, b = 0;
  bool main_woken = true, child_woken = false;
  run_two(
      s,
      [&](int) {
        main_woken = s.on_block_until(&a, "main waits", 2 * kSecond);
        s.on_release(&b);
      },
      [&] { child_woken = s.on_block_until(&b, "child waits", 9 * kSecond); });
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  EXPECT_FALSE(main_woken);
  EXPECT_TRUE(child_woken) << "the later deadline fired although its wait was released";
  auto fired = s.fired_timeouts();
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].what, "main waits");
  EXPECT_LT(s.now_ns(), 9 * kSecond);
}

TEST(TimedWait, AnUntimedBlockNobodyReleasesIsStillADeadlock) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  int resource = 0;
  std::thread main_thread([&] {
    s.enter_main();
    try {
      s.on_block(&resource, "forever");
    } catch (const racelab::TrialAborted&) {
    }
    s.exit_main();
  });
  main_thread.join();
  EXPECT_TRUE(s.aborted());
  EXPECT_EQ(s.abort_outcome(), racelab::Outcome::kHang);
}

TEST(TimedWait, AFailingTrialNamesTheTimeoutsThatFired) {
  racelab::TrialResult r;
  r.outcome = racelab::Outcome::kError;
  r.detail = "AssertionError: threads still alive";
  r.metrics["timeouts_fired"] = {{{"thread", 0},
                                  {"wait", "Thread.join(timeout=60) at t.py:9 of worker-1"},
                                  {"seconds", 60.0},
                                  {"nothing_else_could_run", true},
                                  {"step", 12}}};
  racelab::name_fired_timeouts(&r);
  EXPECT_NE(r.detail.find("AssertionError: threads still alive [timeout expired"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("Thread.join(timeout=60) at t.py:9 of worker-1 in thread 0 after 60 s of logical time"),
            std::string::npos)
      << r.detail;
  EXPECT_NE(r.detail.find("no other thread could run"), std::string::npos) << r.detail;
  const std::string once = r.detail;
  racelab::name_fired_timeouts(&r);
  EXPECT_EQ(r.detail, once) << "named twice";

  racelab::TrialResult holds;
  holds.metrics = r.metrics;
  racelab::name_fired_timeouts(&holds);
  EXPECT_TRUE(holds.detail.empty()) << "a trial that holds needs no note";
}
