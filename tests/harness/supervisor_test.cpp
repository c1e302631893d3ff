// Supervised trials: crash and hang cost one trial; the schedule survives.
#include <csignal>

#include <gtest/gtest.h>

#include "engine/supervisor.h"
#include "test_workloads.h"

using racelab::Outcome;

namespace {
racelab::TrialSpec produce(const std::string& what, int64_t trial) {
  auto s = racelab_test::spec("t_outcome", {{"kind", "random"}}, 1, {{"produce", what}});
  s.trial = trial;
  s.watchdog_s = 0.5;
  return s;
}
}  // namespace

TEST(Supervisor, ManyTrialsPerWorker) {
  racelab::Supervisor sup;
  for (int i = 0; i < 30; ++i) EXPECT_EQ(sup.run(produce("holds", i), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 1);
}

TEST(Supervisor, SegfaultBecomesCrashWithScheduleAndFreshWorker) {
  racelab::Supervisor sup;
  EXPECT_EQ(sup.run(produce("holds", 0), 20).outcome, Outcome::kHolds);
  auto r = sup.run(produce("segv", 1), 20);
  EXPECT_EQ(r.outcome, Outcome::kCrash);
  EXPECT_NE(r.detail.find("SEGV"), std::string::npos) << r.detail;
  // The decisions up to the crash came back through shared memory.
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_EQ(r.decisions.back().point, "outcome.child");
  EXPECT_EQ(sup.run(produce("holds", 2), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, AbortBecomesCrash) {
  racelab::Supervisor sup;
  auto r = sup.run(produce("abort", 0), 20);
  EXPECT_EQ(r.outcome, Outcome::kCrash);
  EXPECT_NE(r.detail.find("ABRT"), std::string::npos) << r.detail;
}

TEST(Supervisor, BlockedInTheOsIsHangViaWatchdogThenFreshWorker) {
  racelab::Supervisor sup;
  auto r = sup.run(produce("os_hang", 0), 30);
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_NE(r.detail.find("watchdog"), std::string::npos) << r.detail;
  EXPECT_TRUE(r.process_tainted);
  EXPECT_EQ(sup.run(produce("holds", 1), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, UnresponsiveWorkerIsKilledAsHang) {
  racelab::Supervisor sup;
  auto s = produce("os_hang", 0);
  s.watchdog_s = 1000;  // the worker's own watchdog will not fire: the parent's timeout must
  auto r = sup.run(s, 0.5);
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_NE(r.detail.find("killed"), std::string::npos) << r.detail;
  EXPECT_EQ(sup.run(produce("holds", 1), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, DeadWorkerCommandIsAnError) {
  racelab::SupervisorOptions o;
  o.worker_argv = {"/nonexistent/racelab", "__worker"};
  racelab::Supervisor sup(o);
  EXPECT_THROW(sup.run(produce("holds", 0), 5), std::runtime_error);
}
