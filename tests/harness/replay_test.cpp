// Replay reproduces the recorded outcome class 100/100; a schedule the program
// cannot follow reports divergence with the step.
#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/run_trial.h"
#include "engine/schedule.h"
#include "engine/supervisor.h"
#include "test_workloads.h"

using racelab::Outcome;
using racelab::Schedule;

namespace {
// The first failing schedule random search finds for `workload`.
Schedule find_failure(const std::string& workload, Outcome want, const std::string& strategy = "random") {
  for (uint64_t seed = 1; seed < 2000; ++seed) {
    auto s = racelab_test::spec(workload, {{"kind", strategy}}, seed);
    s.strategy_name = strategy;
    auto r = racelab::run_trial(s);
    if (r.outcome == want) return Schedule::from_trial(s, r);
  }
  ADD_FAILURE() << "no " << racelab::outcome_name(want) << " found for " << workload;
  return {};
}

void expect_replays(const Schedule& s, int times) {
  int same = 0;
  for (int i = 0; i < times; ++i) {
    auto r = racelab::run_trial(s.replay_spec());
    same += r.outcome == s.outcome;
    if (r.outcome != s.outcome) ADD_FAILURE() << "replay " << i << ": " << racelab::outcome_name(r.outcome) << " " << r.detail;
  }
  std::printf("[measure] replay of %s (%s): %d/%d\n", s.workload.c_str(), racelab::outcome_name(s.outcome), same, times);
  EXPECT_EQ(same, times);
}
}  // namespace

TEST(Replay, StuckStateReplays100Of100) { expect_replays(find_failure("t_flag", Outcome::kStuckState), 100); }
TEST(Replay, DeadlockReplays100Of100) { expect_replays(find_failure("t_deadlock", Outcome::kHang), 100); }
TEST(Replay, LostUpdateReplays100Of100) { expect_replays(find_failure("t_counter", Outcome::kWrongResult), 100); }

TEST(Replay, CompactFormReplaysToo) {
  Schedule s = find_failure("t_flag", Outcome::kStuckState);
  Schedule c = racelab::from_compact(racelab::to_compact(s));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(racelab::run_trial(c.replay_spec()).outcome, Outcome::kStuckState);
}

TEST(Replay, ReplayStrategyThroughRunCell) {
  Schedule s = find_failure("t_counter", Outcome::kWrongResult);
  std::string path = ::testing::TempDir() + "/counter.json";
  racelab::save_schedule(s, path);
  racelab::CellSpec c;
  c.workload = "t_counter";
  c.strategy = "replay:" + path;
  c.max_trials = 10;
  c.supervised = false;
  auto sum = racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  EXPECT_EQ(sum.by_outcome["wrong_result"], 10);
}

TEST(Replay, WrongThreadDivergesWithTheStep) {
  Schedule s = find_failure("t_flag", Outcome::kStuckState);
  // Find a step where the chosen thread can be replaced by a thread that cannot run.
  Schedule bad = s;
  bad.decisions[3].thread = 9;
  auto r = racelab::run_trial(bad.replay_spec());
  EXPECT_EQ(r.outcome, Outcome::kDivergence);
  EXPECT_EQ(r.failing_step, 3);
  EXPECT_NE(r.detail.find("step 3"), std::string::npos) << r.detail;
}

TEST(Replay, WrongPointDiverges) {
  Schedule s = find_failure("t_flag", Outcome::kStuckState);
  Schedule bad = s;
  bad.decisions[5].point = "not.this.point";
  auto r = racelab::run_trial(bad.replay_spec());
  EXPECT_EQ(r.outcome, Outcome::kDivergence);
  EXPECT_EQ(r.failing_step, 5);
}

TEST(Replay, TooShortScheduleDiverges) {
  Schedule s = find_failure("t_flag", Outcome::kStuckState);
  s.decisions.resize(s.decisions.size() / 2);
  auto r = racelab::run_trial(s.replay_spec());
  EXPECT_EQ(r.outcome, Outcome::kDivergence);
  EXPECT_EQ(r.failing_step, static_cast<int64_t>(s.decisions.size()));
}

TEST(Replay, SupervisedReplayMatches) {
  Schedule s = find_failure("t_flag", Outcome::kStuckState);
  racelab::Supervisor sup;
  for (int i = 0; i < 20; ++i) {
    auto spec = s.replay_spec();
    spec.trial = i;
    EXPECT_EQ(sup.run(spec, 20).outcome, Outcome::kStuckState);
  }
  EXPECT_EQ(sup.workers_started(), 1) << "one worker runs many trials";
}
