// Strategies: determinism per seed, PCT's floor, DFS's complete verdict, os.
#include <set>

#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/driver.h"
#include "engine/run_trial.h"
#include "engine/strategy.h"
#include "test_workloads.h"

using racelab::Outcome;
using racelab_test::spec;

namespace {
std::vector<int> threads_of(const racelab::TrialResult& r) {
  std::vector<int> out;
  for (const auto& d : r.decisions) out.push_back(d.thread);
  return out;
}
racelab::CellSpec cell(const std::string& workload, const std::string& strategy, int64_t trials) {
  racelab::CellSpec c;
  c.workload = workload;
  c.strategy = strategy;
  c.max_trials = trials;
  c.supervised = false;
  return c;
}
}  // namespace

TEST(Strategy, RandomIsDeterministicPerSeed) {
  auto a = racelab::run_trial(spec("t_counter", {{"kind", "random"}}, 42));
  auto b = racelab::run_trial(spec("t_counter", {{"kind", "random"}}, 42));
  EXPECT_EQ(threads_of(a), threads_of(b));
  EXPECT_EQ(a.outcome, b.outcome);
  std::set<std::vector<int>> distinct;
  for (uint64_t s = 1; s <= 20; ++s) distinct.insert(threads_of(racelab::run_trial(spec("t_counter", {{"kind", "random"}}, s))));
  EXPECT_GT(distinct.size(), 3u) << "different seeds must explore different schedules";
}

TEST(Strategy, PctFindsStuckStateAndReportsFloor) {
  auto c = cell("t_flag", "pct:3", 300);
  c.stop_at_first_failure = true;
  auto sum = racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  ASSERT_GE(sum.first_failure_trial, 0) << "pct:3 should find the lost restore within 300 trials";
  EXPECT_EQ(sum.by_outcome["stuck_state"], 1);
  EXPECT_GT(sum.pct_floor, 0);
  EXPECT_LT(sum.pct_floor, 1);
}

TEST(Strategy, PctWithDepthOneNeverPreempts) {
  for (uint64_t s = 1; s <= 10; ++s) {
    auto r = racelab::run_trial(spec("t_flag", {{"kind", "pct"}, {"d", 1}, {"k", 50}}, s));
    EXPECT_EQ(r.preemptions, 0);
    EXPECT_EQ(r.outcome, Outcome::kHolds);  // serial runs cannot lose the restore
  }
}

TEST(Strategy, PctFloorFormula) {
  EXPECT_DOUBLE_EQ(racelab::pct_floor(3, 10, 1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(racelab::pct_floor(3, 10, 3), 1.0 / 300);
}

TEST(Strategy, DfsZeroPreemptionsIsCompleteAndHolds) {
  auto sum = racelab::run_cell(cell("t_flag", "dfs:0", 1000), [](const racelab::TrialRecord& r) {
    EXPECT_EQ(r.preemptions, 0);
  });
  EXPECT_TRUE(sum.exhausted);
  EXPECT_EQ(sum.failures, 0);
  EXPECT_LT(sum.trials, 1000);
}

TEST(Strategy, DfsExploresDistinctSchedulesAndFindsTheBug) {
  std::set<std::vector<int64_t>> seen;
  int64_t max_pre = 0;
  auto sum = racelab::run_cell(cell("t_flag", "dfs:2", 5000), [&](const racelab::TrialRecord& r) {
    max_pre = std::max(max_pre, r.preemptions);
  });
  EXPECT_TRUE(sum.exhausted) << "dfs:2 over two short threads must finish";
  EXPECT_LE(max_pre, 2);
  EXPECT_GT(sum.by_outcome["stuck_state"], 0);
  // More budget than dfs:1 needs: dfs:1 is a strict subset, so it runs fewer trials.
  auto sum1 = racelab::run_cell(cell("t_flag", "dfs:1", 5000), [](const racelab::TrialRecord&) {});
  EXPECT_TRUE(sum1.exhausted);
  EXPECT_LT(sum1.trials, sum.trials);
}

TEST(Strategy, DfsIncompleteWhenBudgetRunsOut) {
  auto sum = racelab::run_cell(cell("t_flag", "dfs:2", 3), [](const racelab::TrialRecord&) {});
  EXPECT_EQ(sum.trials, 3);
  EXPECT_FALSE(sum.exhausted);
}

TEST(Strategy, OsRunsFreeAndJitterToo) {
  for (const char* s : {"os", "os+jitter", "os+jitter:0.5"}) {
    // t_exclusive uses atomics only, so this also passes under ThreadSanitizer.
    auto sum = racelab::run_cell(cell("t_exclusive", s, 5), [](const racelab::TrialRecord& r) {
      EXPECT_TRUE(r.compact.empty()) << "free-running trials are not replayable";
    });
    EXPECT_EQ(sum.trials, 5) << s;
  }
}

TEST(Strategy, BadNamesAndSpecsAreRejectedWithTheField) {
  EXPECT_THROW(racelab::make_driver("pct", 2), std::invalid_argument);
  EXPECT_THROW(racelab::make_driver("pct:x", 2), std::invalid_argument);
  EXPECT_THROW(racelab::make_driver("dfs:-1", 2), std::invalid_argument);
  EXPECT_THROW(racelab::make_driver("bogus", 2), std::invalid_argument);
  EXPECT_THROW(racelab::make_driver("os+jitter:7", 2), std::invalid_argument);
  try {
    racelab::make_strategy({{"kind", "pct"}, {"d", 0}, {"k", 5}}, 1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'d'"), std::string::npos) << e.what();
  }
}
