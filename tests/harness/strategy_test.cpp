// Strategies: determinism per seed, PCT's floor, DFS's complete verdict, os, the list of strategy files.
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

// The names and spec kinds come from one list of strategy files
// (engine/strategies/families.cpp): each name parses to its kind and makes a
// driver whose first spec is its strategy's, and each spec kind makes a strategy.
TEST(Strategy, EveryNameAndSpecKindReachesItsStrategyFile) {
  using Kind = racelab::StrategyName::Kind;
  EXPECT_EQ(racelab::strategy_syntax(),
            "os, os+jitter[:P], random, pct:D, pos, surw, dfs:P, dpor:P, auto, auto+os or replay:FILE");
  struct Case {
    const char* name;
    Kind kind;
    int param;
    const char* first_spec_kind;
  };
  const Case cases[] = {{"os", Kind::kOs, 0, "free"},          {"os+jitter:0.5", Kind::kOsJitter, 0, "free"},
                        {"random", Kind::kRandom, 0, "random"}, {"pct:3", Kind::kPct, 3, "pct"},
                        {"pos", Kind::kPos, 0, "pos"},          {"surw", Kind::kSurw, 0, "random"},
                        {"dfs:2", Kind::kDfs, 2, "follow"},     {"dpor:1", Kind::kDpor, 1, "follow"},
                        {"auto", Kind::kAuto, 0, "pos"},        {"auto+os", Kind::kAuto, 1, "pos"}};
  for (const Case& c : cases) {
    const racelab::StrategyName s = racelab::parse_strategy(c.name);
    EXPECT_EQ(s.kind, c.kind) << c.name;
    EXPECT_EQ(s.param, c.param) << c.name;
    auto driver = racelab::make_driver(c.name, 2, 1);
    nlohmann::json spec;
    ASSERT_TRUE(driver->next(0, &spec)) << c.name;
    EXPECT_EQ(spec.value("kind", ""), c.first_spec_kind) << c.name << ": " << spec.dump();
    EXPECT_EQ(driver->controlled(), s.controlled()) << c.name;
  }
  EXPECT_DOUBLE_EQ(racelab::parse_strategy("os+jitter:0.5").jitter, 0.5);
  EXPECT_EQ(racelab::parse_strategy("replay:x.json").replay, "x.json");
  for (const char* bad : {"pos:1", "auto:1", "os:1", "random:", "replay:", "replay", "dpor:9"})
    EXPECT_THROW(racelab::parse_strategy(bad), std::invalid_argument) << bad;

  const nlohmann::json specs[] = {{{"kind", "random"}},
                                  {{"kind", "pct"}, {"d", 2}, {"k", 10}},
                                  {{"kind", "pos"}},
                                  {{"kind", "surw"}},
                                  {{"kind", "follow"}, {"prefix", nlohmann::json::array()}},
                                  {{"kind", "replay"}, {"decisions", nlohmann::json::array()}},
                                  {{"kind", "preempt"}, {"set", nlohmann::json::array()}}};
  for (const auto& spec : specs) EXPECT_NE(racelab::make_strategy(spec, 1), nullptr) << spec.dump();
  try {
    racelab::make_strategy({{"kind", "free"}}, 1);  // free running has no Strategy
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("one of random|pct|pos|surw|follow|replay|preempt"), std::string::npos)
        << e.what();
  }
}
