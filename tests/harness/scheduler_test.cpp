// The controlled scheduler: one thread at a time, deadlock -> hang, the
// process survives aborts, unmanaged threads are reported.
#include <algorithm>
#include <chrono>
#include <set>
#include <cstdio>
#include <thread>

#include <gtest/gtest.h>

#include "engine/run_trial.h"
#include "engine/scheduler.h"
#include "racelab/sync.h"
#include "test_workloads.h"

using racelab::Outcome;
using racelab_test::spec;

TEST(Scheduler, ExactlyOneManagedThreadRunsAtATime) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto r = racelab::run_trial(spec("t_exclusive", {{"kind", "random"}}, seed, {{"rounds", 10}}, "none", 4));
    ASSERT_EQ(r.outcome, Outcome::kHolds) << r.detail;
    EXPECT_EQ(r.metrics["max_inside"], 1) << "seed " << seed;
    EXPECT_GT(r.steps, 40);
  }
}

TEST(Scheduler, FreeRunningIsNotSerialised) {
  // The same workload without the scheduler may overlap; it must at least run.
  auto r = racelab::run_trial(spec("t_exclusive", {{"kind", "free"}}, 1, {{"rounds", 10}}, "none", 4));
  EXPECT_EQ(r.outcome, Outcome::kHolds);
  EXPECT_GE(r.metrics["max_inside"].get<int>(), 1);
  EXPECT_TRUE(r.decisions.empty());
}

TEST(Scheduler, RealDeadlockIsHangAndProcessSurvives) {
  // dfs over the opposite-order locks: some schedule deadlocks.
  bool saw_hang = false;
  for (uint64_t seed = 1; seed <= 50 && !saw_hang; ++seed) {
    auto r = racelab::run_trial(spec("t_deadlock", {{"kind", "random"}}, seed));
    if (r.outcome == Outcome::kHang) {
      saw_hang = true;
      EXPECT_NE(r.detail.find("deadlock"), std::string::npos) << r.detail;
      EXPECT_NE(r.detail.find("lock_a"), std::string::npos) << r.detail;
      EXPECT_GE(r.failing_step, 0);
      EXPECT_FALSE(r.process_tainted);
    }
  }
  ASSERT_TRUE(saw_hang);
  // The next trial runs normally in the same process.
  auto ok = racelab::run_trial(spec("t_deadlock", {{"kind", "random"}}, 1, {}, "ordered"));
  EXPECT_EQ(ok.outcome, Outcome::kHolds) << ok.detail;
}

TEST(Scheduler, DecisionsRecordPointsAndPreemptions) {
  auto r = racelab::run_trial(spec("t_counter", {{"kind", "random"}}, 7));
  ASSERT_FALSE(r.decisions.empty());
  int64_t pre = 0;
  for (size_t i = 0; i < r.decisions.size(); ++i) {
    const auto& d = r.decisions[i];
    EXPECT_EQ(d.step, static_cast<int64_t>(i));
    EXPECT_FALSE(d.point.empty());
    EXPECT_TRUE(std::find(d.runnable.begin(), d.runnable.end(), d.thread) != d.runnable.end());
    EXPECT_EQ(d.preemption, d.requester_runnable && d.thread != d.requester);
    pre += d.preemption;
  }
  EXPECT_EQ(pre, r.preemptions);
  EXPECT_EQ(r.managed_threads, 3);  // thread 0 + 2 workers
  // The timeline has every kind the scheduler sees.
  std::set<std::string> kinds;
  for (const auto& e : r.events) kinds.insert(e.kind);
  for (const char* k : {"point", "start", "end", "join"}) EXPECT_TRUE(kinds.count(k)) << k;
}

TEST(Scheduler, UnmanagedThreadTouchingInstrumentationIsReported) {
  racelab::register_workload({"t_unmanaged", "a raw std::thread hits a point", {}, {"none"}, false, [] {},
                              [](const racelab::TrialInput&) {
                                std::thread raw([] { racelab::point("raw.thread"); });
                                raw.join();
                                return racelab::Observation{};
                              }});
  auto r = racelab::run_trial(spec("t_unmanaged", {{"kind", "random"}}, 1));
  EXPECT_GT(r.uncontrolled, 0);
  EXPECT_NE(r.detail.find("uncontrolled nondeterminism"), std::string::npos) << r.detail;
}

// Handoff cost: a ping-pong of points between two threads. Printed, not asserted.
TEST(Scheduler, MeasuresHandoffLatency) {
  racelab::register_workload({"t_pingpong", "points only", {{"points", 2000}}, {"none"}, false, [] {},
                              [](const racelab::TrialInput& in) {
                                int n = in.knobs.value("points", 2000);
                                std::vector<racelab::Thread> ts;
                                for (int i = 0; i < 2; ++i)
                                  ts.emplace_back([n] {
                                    for (int k = 0; k < n; ++k) racelab::point("pp");
                                  });
                                for (auto& t : ts) t.join();
                                return racelab::Observation{};
                              }});
  // Alternate every step: the preempt strategy is not needed, PCT with d=1 never switches,
  // so use random (switches about half the time) and count switches.
  auto s = spec("t_pingpong", {{"kind", "random"}}, 3);
  s.record_events = false;
  auto r = racelab::run_trial(s);
  ASSERT_EQ(r.outcome, Outcome::kHolds);
  int64_t switches = 0;
  for (size_t i = 1; i < r.decisions.size(); ++i) switches += r.decisions[i].thread != r.decisions[i - 1].thread;
  std::printf("[measure] %lld steps, %lld thread switches in %.1f ms: %.2f us/step\n",
              static_cast<long long>(r.steps), static_cast<long long>(switches), r.wall_ms,
              1000.0 * r.wall_ms / static_cast<double>(r.steps));
  EXPECT_GE(r.steps, 4000);  // every point is a step (plus thread ends and joins)
}
