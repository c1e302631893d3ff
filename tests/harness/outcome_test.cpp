// Every outcome class of docs/ARCHITECTURE.md is produced by a test, and the priority
// order decides when several apply.
#include <gtest/gtest.h>

#include "engine/outcome.h"
#include "engine/run_trial.h"
#include "engine/supervisor.h"
#include "test_workloads.h"

using racelab::Outcome;

namespace {
racelab::TrialResult produce(const std::string& what) {
  return racelab::run_trial(racelab_test::spec("t_outcome", {{"kind", "random"}}, 1, {{"produce", what}}));
}
}  // namespace

TEST(Outcome, Holds) { EXPECT_EQ(produce("holds").outcome, Outcome::kHolds); }
TEST(Outcome, Error) {
  auto r = produce("error");
  EXPECT_EQ(r.outcome, Outcome::kError);
  EXPECT_NE(r.detail.find("FX"), std::string::npos);
}
TEST(Outcome, StuckState) { EXPECT_EQ(produce("stuck_state").outcome, Outcome::kStuckState); }
TEST(Outcome, WrongResult) { EXPECT_EQ(produce("wrong_result").outcome, Outcome::kWrongResult); }
TEST(Outcome, SilentFallback) { EXPECT_EQ(produce("silent_fallback").outcome, Outcome::kSilentFallback); }
TEST(Outcome, HangFromDeadlock) {
  bool hang = false;
  for (uint64_t s = 1; s < 100 && !hang; ++s)
    hang = racelab::run_trial(racelab_test::spec("t_deadlock", {{"kind", "random"}}, s)).outcome == Outcome::kHang;
  EXPECT_TRUE(hang);
}
TEST(Outcome, CrashInWorker) {
  racelab::Supervisor sup;
  auto s = racelab_test::spec("t_outcome", {{"kind", "random"}}, 1, {{"produce", "segv"}});
  EXPECT_EQ(sup.run(s, 20).outcome, Outcome::kCrash);
}
TEST(Outcome, Divergence) {
  auto s = racelab_test::spec("t_outcome", {{"kind", "replay"}, {"decisions", {{{"thread", 5}}}}}, 1);
  EXPECT_EQ(racelab::run_trial(s).outcome, Outcome::kDivergence);
}
// data_race needs a TSan build: see tsan_test.cpp (harness_tsan_tests).

TEST(Outcome, PriorityOrder) {
  std::vector<Outcome> order = {Outcome::kInfrastructure, Outcome::kCrash,      Outcome::kHang,       Outcome::kDivergence,
                                Outcome::kDataRace,   Outcome::kStuckState, Outcome::kWrongResult,
                                Outcome::kError,      Outcome::kSilentFallback, Outcome::kHolds};
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    EXPECT_GT(racelab::outcome_rank(order[i]), racelab::outcome_rank(order[i + 1]));
    EXPECT_EQ(racelab::worst(order[i], order[i + 1]), order[i]);
  }
  // Killed from outside: neither a failure nor a pass (engine/outcome.h).
  EXPECT_FALSE(racelab::is_failure(Outcome::kInfrastructure));
  EXPECT_FALSE(racelab::is_failure("infrastructure"));
  EXPECT_FALSE(racelab::is_conclusive("infrastructure"));
  EXPECT_TRUE(racelab::is_failure("crash"));
  EXPECT_TRUE(racelab::is_failure("a_class_from_a_newer_racelab"));
  racelab::Observation obs;
  obs.errors = {"boom"};
  obs.silent_fallbacks = 2;
  obs.stuck_state = "stuck";
  std::string detail;
  EXPECT_EQ(racelab::classify_observation(obs, &detail), Outcome::kStuckState);
  obs.stuck_state.clear();
  EXPECT_EQ(racelab::classify_observation(obs, &detail), Outcome::kError);
  obs.wrong_result = "bad";
  EXPECT_EQ(racelab::classify_observation(obs, &detail), Outcome::kWrongResult);
  for (Outcome o : racelab::all_outcomes()) {
    Outcome back;
    ASSERT_TRUE(racelab::parse_outcome(racelab::outcome_name(o), &back));
    EXPECT_EQ(back, o);
  }
}

// A workload's prepare (racelab/workload.h) runs before every trial, after
// reset, with the body's own input, and outside the trial's time.
TEST(Prepare, RunsBeforeEveryTrialWithTheBodysInput) {
  for (uint64_t seed : {1, 2, 3}) {
    const auto r = racelab::run_trial(
        racelab_test::spec("t_prepared", {{"kind", "random"}}, seed, nlohmann::json::object(), "other", 3));
    EXPECT_EQ(r.outcome, Outcome::kHolds) << r.detail;
  }
}

TEST(Prepare, ItsTimeIsNotTheTrials) {
  // The body does nothing; prepare sleeps 1.5 s. Counted in the trial, the
  // wall time would be over 1.5 s however idle or loaded the machine.
  const auto r = racelab::run_trial(
      racelab_test::spec("t_prepared", {{"kind", "random"}}, 1, {{"prepare_ms", 1500}}, "none", 2));
  EXPECT_EQ(r.outcome, Outcome::kHolds) << r.detail;
  EXPECT_LT(r.wall_ms, 1500.0);
}
