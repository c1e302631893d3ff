// engine/trial_plan.h: a trial's outcome depends on its index alone, so a
// cell's parts, run apart, are the whole cell trial for trial.
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/trial_plan.h"
#include "test_workloads.h"

using racelab::CellPart;

TEST(TrialPlan, EveryTrialBelongsToExactlyOnePart) {
  for (int count : {1, 2, 3, 4, 7}) {
    for (uint64_t offset : {0u, 1u, 5u}) {
      for (int64_t block : {int64_t{32}, int64_t{1}, int64_t{0}}) {
        const int64_t trials = 400;
        std::map<int64_t, int> owners;
        int parts_seen = 0;
        for (int i = 0; i < count; ++i) {
          const CellPart part{i, count, offset};
          bool any = false;
          for (int64_t t = 0; t < trials; ++t)
            if (racelab::part_runs(part, t, block)) ++owners[t], any = true;
          EXPECT_EQ(any, racelab::part_has_trials(part, trials, block)) << "part " << i << " of " << count;
          parts_seen += any;
        }
        EXPECT_EQ(parts_seen, racelab::parts_with_trials({0, count, offset}, trials, block));
        ASSERT_EQ(owners.size(), static_cast<size_t>(trials));
        for (const auto& [t, n] : owners) ASSERT_EQ(n, 1) << "trial " << t << " of " << count << " parts";
      }
    }
  }
}

TEST(TrialPlan, ACellSplitsIntoBlocksDealtFromItsOffset) {
  // 400 trials of a learning strategy = 13 blocks of 32 over 4 parts: every part has some.
  EXPECT_EQ(racelab::parts_with_trials({0, 4, 0}, 400, 32), 4);
  EXPECT_TRUE(racelab::part_runs({0, 4, 0}, 0, 32));
  EXPECT_TRUE(racelab::part_runs({0, 4, 0}, 31, 32));
  EXPECT_TRUE(racelab::part_runs({1, 4, 0}, 32, 32));
  EXPECT_TRUE(racelab::part_runs({3, 4, 2}, 32, 32)) << "block 1 of a cell at offset 2 goes to part (2+1)%4";
  // A cell of one block goes whole to the part its offset names, as whole cells were dealt.
  EXPECT_EQ(racelab::parts_with_trials({0, 4, 6}, 20, 32), 1);
  EXPECT_TRUE(racelab::part_has_trials({2, 4, 6}, 20, 32));
  EXPECT_FALSE(racelab::part_has_trials({0, 4, 6}, 20, 32));
  // A strategy that learns nothing deals trial by trial: 20 trials spread over 4 parts.
  EXPECT_EQ(racelab::parts_with_trials({0, 4, 6}, 20, 1), 4);
  // Which strategies learn, and which are one sequence (dfs, dpor: never cut).
  EXPECT_EQ(racelab::trial_block("pct:3"), racelab::kLearningBlock);
  EXPECT_EQ(racelab::trial_block("surw"), racelab::kLearningBlock);
  EXPECT_EQ(racelab::trial_block("auto"), racelab::kLearningBlock);
  EXPECT_EQ(racelab::trial_block("auto+os"), racelab::kLearningBlock);
  EXPECT_EQ(racelab::trial_block("random"), 1);
  EXPECT_EQ(racelab::trial_block("pos"), 1);
  EXPECT_EQ(racelab::trial_block("os"), 1);
  EXPECT_EQ(racelab::trial_block("dfs:2"), 0);
  EXPECT_EQ(racelab::trial_block("dpor:1"), 0);
  EXPECT_EQ(racelab::parts_with_trials({0, 4, 0}, 400, 0), 1);
}

namespace {

using Trial = std::tuple<uint64_t, std::string, int64_t, int64_t, std::string>;  // seed, outcome, steps, preemptions, arm

std::map<int64_t, Trial> run(racelab::CellSpec c, CellPart part) {
  c.part = part;
  std::map<int64_t, Trial> out;
  racelab::run_cell(c, [&](const racelab::TrialRecord& r) {
    EXPECT_EQ(out.count(r.trial), 0u) << "trial " << r.trial << " twice";
    out[r.trial] = {r.seed, r.outcome, r.steps, r.preemptions, r.metrics.value("strategy_used", "")};
  });
  return out;
}

}  // namespace

// The check: one cell of 400 trials over 4 parts, together, is the
// whole cell run at once, trial for trial, under every strategy that learns
// across trials (their drivers start afresh at each block) and one that does not.
TEST(TrialPlan, FourPartsOfACellAreTheWholeCellTrialForTrial) {
  for (const char* strategy : {"auto", "pct:3", "surw", "random", "pos"}) {
    racelab::CellSpec c;
    c.workload = "t_flag";
    c.strategy = strategy;
    c.threads = 3;
    c.seed = 7;
    c.max_trials = 400;
    c.supervised = false;
    const auto whole = run(c, {});
    ASSERT_EQ(whole.size(), 400u);
    std::map<int64_t, Trial> parts;
    for (int i = 0; i < 4; ++i)
      for (const auto& [t, trial] : run(c, {i, 4, 3})) EXPECT_TRUE(parts.emplace(t, trial).second) << t;
    EXPECT_EQ(parts, whole) << strategy;
    int64_t failures = 0;
    for (const auto& [t, trial] : whole) failures += std::get<1>(trial) != "holds";
    EXPECT_GT(failures, 0) << strategy << ": the lost restore is found, so outcomes differ between trials";
  }
}
