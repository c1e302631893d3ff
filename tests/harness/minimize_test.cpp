// Minimisation keeps the outcome class and never adds preemptions.
#include <gtest/gtest.h>

#include "engine/minimize.h"
#include "engine/run_trial.h"
#include "test_workloads.h"

using racelab::Outcome;
using racelab::Schedule;

namespace {
void check_minimizes(const std::string& workload, Outcome want, int threads) {
  int done = 0;
  for (uint64_t seed = 1; seed < 3000 && done < 3; ++seed) {
    auto s = racelab_test::spec(workload, {{"kind", "random"}}, seed, nlohmann::json::object(), "none", threads);
    s.strategy_name = "random";
    auto r = racelab::run_trial(s);
    if (r.outcome != want) continue;
    ++done;
    Schedule in = Schedule::from_trial(s, r);
    auto m = racelab::minimize(in, [](const racelab::TrialSpec& t) { return racelab::run_trial(t); });
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_LE(m.preemptions_after, m.preemptions_before);
    EXPECT_EQ(m.preemptions_before, in.count_preemptions());
    EXPECT_EQ(m.schedule.outcome, want);
    EXPECT_EQ(m.schedule.minimized_from_preemptions, in.count_preemptions());
    EXPECT_EQ(m.schedule.to_json()["minimized_from_preemptions"], in.count_preemptions());
    std::printf("[measure] %s seed %llu: preemptions %lld -> %lld, switches %lld -> %lld, %lld trials\n",
                workload.c_str(), static_cast<unsigned long long>(seed), static_cast<long long>(m.preemptions_before),
                static_cast<long long>(m.preemptions_after), static_cast<long long>(m.switches_before),
                static_cast<long long>(m.switches_after), static_cast<long long>(m.trials));
    // The minimised schedule is exact: it replays strictly.
    for (int i = 0; i < 10; ++i) EXPECT_EQ(racelab::run_trial(m.schedule.replay_spec()).outcome, want);
  }
  EXPECT_EQ(done, 3);
}
}  // namespace

TEST(Minimize, StuckStateNeverGainsPreemptions) { check_minimizes("t_flag", Outcome::kStuckState, 4); }
TEST(Minimize, DeadlockShrinks) { check_minimizes("t_deadlock", Outcome::kHang, 4); }
TEST(Minimize, LostUpdateShrinksToOnePreemption) {
  // One preemption between a read and a write loses an update: the minimum is 1.
  auto s = racelab_test::spec("t_counter", {{"kind", "random"}}, 1, {{"increments", 3}}, "none", 3);
  // A bounded search: if the bug stopped reproducing, this fails instead of
  // looping until CTest's timeout.
  bool found = false;
  for (uint64_t seed = 1; seed <= 3000 && !found; ++seed) {
    s.seed = seed;
    auto r = racelab::run_trial(s);
    if (r.outcome != Outcome::kWrongResult || r.preemptions < 3) continue;
    found = true;
    auto m = racelab::minimize(Schedule::from_trial(s, r), [](const racelab::TrialSpec& t) { return racelab::run_trial(t); });
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_GE(m.preemptions_after, 1);
    EXPECT_LT(m.preemptions_after, m.preemptions_before);
  }
  EXPECT_TRUE(found) << "no seed in 1..3000 lost an update with 3 or more preemptions";
}

TEST(Minimize, NonReproducingInputIsReported) {
  auto s = racelab_test::spec("t_counter", {{"kind", "random"}}, 1);
  auto r = racelab::run_trial(s);
  Schedule in = Schedule::from_trial(s, r);
  in.outcome = in.outcome == Outcome::kHolds ? Outcome::kCrash : Outcome::kHolds;
  auto m = racelab::minimize(in, [](const racelab::TrialSpec& t) { return racelab::run_trial(t); });
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("does not reproduce"), std::string::npos);
}
