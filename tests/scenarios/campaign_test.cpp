// Matrix expansion, sharding, campaigns (with a deterministic stand-in for the
// engine's run_cell), merging and Ctrl-C.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fixtures.h"
#include "campaign/campaign.h"
#include "engine/trial_plan.h"
#include "campaign/cell_claims.h"
#include "campaign/matrix.h"
#include "reports/live_report.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;
using racelab::part_runs;
using racelab::trial_block;

// A campaign with its report written as it runs, as `racelab compare` runs one.
struct Reported : CampaignOutcome {
  json report;
  ReportFiles files;
};
Reported run_reported(const std::vector<Scenario>& scenarios, CampaignOptions o, const CellRunner& runner,
                      const std::string& junit = "") {
  LiveReport live;
  o.report = live_report(&live, o.out_dir, junit);
  Reported out;
  static_cast<CampaignOutcome&>(out) = run_campaign(scenarios, o, runner);
  out.report = live.report;
  out.files = live.files;
  return out;
}

Scenario toy() { return parse_scenario(testing::scenario_doc(), "toy_leak.json"); }

// Stands in for run_cell: `none` fails (error) on every 3rd trial starting at
// the 2nd, disable_check falls back silently on the 4th, the rest hold.
CellSummary fake_cell(const CellSpec& spec, const TrialSink& sink) {
  CellSummary s;
  for (int64_t t = 0; t < spec.max_trials; ++t) {
    if (!part_runs(spec.part, t, trial_block(spec.strategy))) continue;  // as run_cell: a shard's part only
    std::string outcome = "holds";
    if (spec.mitigation == "none" && t % 3 == 1) outcome = "error";
    if (spec.mitigation == "disable_check" && t == 3) outcome = "silent_fallback";
    TrialRecord r = testing::record(spec.mitigation, spec.strategy, spec.threads, t, outcome);
    r.seed = spec.seed * 1000 + t;
    sink(r);
    ++s.trials;
    ++s.by_outcome[outcome];
    if (outcome != "holds") {
      ++s.failures;
      if (s.first_failure_trial < 0) s.first_failure_trial = t;
    }
    if (spec.stop_at_first_failure && s.failures > 0 && s.trials >= spec.rate_trials) break;  // as run_cell
  }
  return s;
}

TEST(Matrix, ExpandsEveryCombinationInAFixedOrder) {
  Scenario s = toy();
  s.seeds = {1, 2};
  const auto cells = plan_cells({s}, {});
  ASSERT_EQ(cells.size(), 3u * 2 * 2 * 2);  // mitigations x threads x strategies x seeds
  EXPECT_EQ(cells[0].spec.mitigation, "none");
  EXPECT_EQ(cells[0].spec.threads, 2);
  EXPECT_EQ(cells[0].spec.strategy, "random");
  EXPECT_EQ(cells[1].spec.seed, 2u);
  std::set<std::tuple<std::string, int, std::string, uint64_t>> unique;
  for (const auto& c : cells) unique.insert({c.spec.mitigation, c.spec.threads, c.spec.strategy, c.spec.seed});
  EXPECT_EQ(unique.size(), cells.size());
}

TEST(Matrix, StrategyThreadOverrideAndBudgetScaling) {
  Scenario s = toy();
  s.strategies[1].threads = {2};  // pct:2 only at 2 threads
  PlanOptions o;
  o.budget_scale = 0.25;
  const auto cells = plan_cells({s}, o);
  EXPECT_EQ(cells.size(), 3u * (2 + 1));
  for (const auto& c : cells) {
    if (c.spec.mitigation == "none") {
      // reproduces_within 5 raises the scaled budget (3) and stops early.
      EXPECT_EQ(c.spec.max_trials, 5);
      EXPECT_TRUE(c.spec.stop_at_first_failure);
    } else {
      EXPECT_EQ(c.spec.max_trials, 3);  // ceil(10 * 0.25)
      EXPECT_FALSE(c.spec.stop_at_first_failure);
    }
  }
  o.ci = true;
  for (const auto& c : plan_cells({s}, o)) EXPECT_TRUE(c.spec.stop_at_first_failure);
}

TEST(Matrix, TheTimeCapCannotCutWhatAnExpectationNeeds) {
  // On a loaded machine trials are slower, so a seconds budget runs fewer of
  // them: it must not be what fails a reproduces_within or holds_over check.
  Scenario s = toy();  // none: reproduces_within 5; global_lock: holds_over 40 over 4 cells of 10 trials
  s.strategies[0].seconds = 0.001;
  s.strategies[1].seconds = 0.001;
  PlanOptions o;
  o.budget_scale = 0.5;  // 5 trials a cell, holds_over needs 20
  o.ci = true;
  for (const auto& c : plan_cells({s}, o)) {
    if (c.spec.mitigation == "none") {
      EXPECT_EQ(c.spec.min_trials, 5);
    } else if (c.spec.mitigation == "global_lock") {
      EXPECT_EQ(c.spec.min_trials, 5);  // 20 over 4 cells
    } else if (c.spec.mitigation == "disable_check") {
      EXPECT_EQ(c.spec.min_trials, 0);
    }
    EXPECT_LE(c.spec.min_trials, c.spec.max_trials);
  }
}

TEST(Matrix, ShardsPartitionEveryCellsTrials) {
  // Every trial of every cell is in exactly one shard's part (engine/trial_plan.h).
  Scenario s = toy();
  s.strategies[0].trials = 100;  // random: dealt trial by trial
  const auto cells = plan_cells({s}, {});
  std::map<std::pair<size_t, int64_t>, int> owners;
  for (int i = 0; i < 5; ++i)
    for (const auto& c : select_shard(cells, {i, 5})) {
      EXPECT_EQ(c.spec.part.index, i);
      EXPECT_EQ(c.spec.part.count, 5);
      for (int64_t t = 0; t < c.spec.max_trials; ++t)
        if (part_runs(c.spec.part, t, trial_block(c.spec.strategy))) ++owners[{c.index, t}];
    }
  int64_t trials = 0;
  for (const auto& c : cells) trials += c.spec.max_trials;
  EXPECT_EQ(owners.size(), static_cast<size_t>(trials));
  for (const auto& [cell_trial, n] : owners) EXPECT_EQ(n, 1) << "cell " << cell_trial.first << " trial " << cell_trial.second;
  Shard sh;
  EXPECT_TRUE(parse_shard("2/4", &sh));
  EXPECT_EQ(sh.index, 1);
  EXPECT_EQ(sh.count, 4);
  for (const char* bad : {"0/4", "5/4", "2/0", "2", "a/b", "2/4x"}) EXPECT_FALSE(parse_shard(bad, &sh)) << bad;
}

TEST(Matrix, AReproductionCellStopsOnceDecidedButKeepsTrialsForItsRate) {
  Scenario s = toy();  // none: reproduces_within 5 over random and pct:2
  s.strategies[0].trials = 40;
  s.strategies[1].trials = 6;
  for (const auto& c : plan_cells({s}, {})) {
    if (c.spec.mitigation != "none") {
      EXPECT_FALSE(c.spec.stop_at_first_failure) << "holds_over and outcome cells run their whole budget";
      continue;
    }
    EXPECT_TRUE(c.spec.stop_at_first_failure);
    // At least kRateTrials, or the whole budget when that is smaller.
    EXPECT_EQ(c.spec.rate_trials, c.spec.strategy == "random" ? kRateTrials : 6) << c.spec.strategy;
    EXPECT_EQ(c.spec.min_trials, 5);
  }
  // A max_rate clause needs the rate over the whole budget: no early stop.
  s.expectations[0].max_rate = 0.9;
  for (const auto& c : plan_cells({s}, {}))
    if (c.spec.mitigation == "none") {
      EXPECT_FALSE(c.spec.stop_at_first_failure);
    }
  // ci stops at the first failure, with no minimum.
  s.expectations[0].max_rate = -1;
  PlanOptions ci;
  ci.ci = true;
  for (const auto& c : plan_cells({s}, ci))
    if (c.spec.mitigation == "none") {
      EXPECT_EQ(c.spec.rate_trials, 0);
    }
}

TEST(Campaign, ADecidedCellStopsAfterItsRateTrialsAndSaysSo) {
  Scenario s = toy();
  s.strategies[0].trials = 40;  // none fails at trials 2, 5, 8, ...
  s.source["strategies"][0]["trials"] = 40;  // the report plans from the document
  const auto dir = testing::make_temp_dir();
  CampaignOptions o;
  o.out_dir = dir;
  const auto out = run_reported({s}, o, fake_cell);
  EXPECT_TRUE(all_expectations_pass(out.report));
  int checked = 0;
  for (const auto& c : out.report["scenarios"][0]["cells"]) {
    if (c["strategy"] != "random") continue;
    ++checked;
    if (c["mitigation"] == "none") {
      EXPECT_EQ(c["trials"], kRateTrials);
      EXPECT_EQ(c["stopped"], "decided");
      EXPECT_GT(c["failures"].get<int64_t>(), 1) << "the rate rests on more than the first failure";
    } else {
      EXPECT_EQ(c["trials"], 40);
      EXPECT_FALSE(c.contains("stopped"));
    }
  }
  EXPECT_EQ(checked, 6);
}

TEST(Matrix, CostOrderPutsTheDearestCellsFirst) {
  Scenario s = toy();
  Scenario t = toy();
  t.name = "toy_trainer";
  t.workload = "trainer";
  auto cells = plan_cells({s, t}, {});
  const auto ordered = order_by_cost(cells);
  ASSERT_EQ(ordered.size(), cells.size());
  EXPECT_EQ(ordered.front().spec.workload, "trainer");
  EXPECT_EQ(ordered.front().spec.threads, 4) << "more threads, more work per trial";
  for (size_t i = 1; i < ordered.size(); ++i)
    EXPECT_GE(estimated_cell_cost(ordered[i - 1]), estimated_cell_cost(ordered[i]));
}

TEST(Campaign, ShardsThatClaimFromOneListRunEveryCellOnce) {
  const auto dir = testing::make_temp_dir();
  CampaignOptions o;
  o.claim_file = dir + "/claims";
  ResultsData merged;
  std::vector<size_t> claimed;
  // The first shard stops (interrupted) in its fourth cell; the second,
  // claiming from the same counter, takes only what the first did not.
  for (int i = 0; i < 2; ++i) {
    o.out_dir = dir + "/shard" + std::to_string(i);
    o.shard = {i, 2};
    int64_t calls = 0;
    const auto part = run_reported({toy()}, o, [&](const CellSpec& spec, const TrialSink& sink) {
      if (i == 0 && ++calls == 4) request_interrupt();
      return fake_cell(spec, sink);
    });
    clear_interrupt();
    claimed.push_back(part.cells);
    read_results(part.results_path, &merged);
  }
  EXPECT_EQ(claimed, (std::vector<size_t>{4, 8}));
  std::set<std::string> keys;
  for (const auto& c : merged.cells)
    EXPECT_TRUE(keys.insert(c["mitigation"].get<std::string>() + std::to_string(c["threads"].get<int>()) +
                            c["strategy"].get<std::string>())
                    .second)
        << "ran twice: " << c.dump();
  EXPECT_EQ(keys.size(), 12u);
}

TEST(Campaign, WritesResultsAndAReportWhoseExpectationsPass) {
  const auto dir = testing::make_temp_dir();
  CampaignOptions o;
  o.out_dir = dir;
  const auto out = run_reported({toy()}, o, fake_cell, dir + "/junit.xml");
  EXPECT_FALSE(out.interrupted);
  EXPECT_EQ(out.cells, 12u);
  EXPECT_TRUE(all_expectations_pass(out.report)) << out.report["scenarios"][0]["mitigations"].dump(1);
  ResultsData d;
  read_results(out.results_path, &d);
  EXPECT_EQ(d.trials.size(), 120u);
  EXPECT_EQ(d.cells.size(), 12u);
  EXPECT_EQ(d.ends.size(), 1u);
  // The report re-read from disk says the same as the one returned.
  EXPECT_EQ(build_report(d)["expectations"], out.report["expectations"]);
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/junit.xml"));
}

TEST(Campaign, CiModeStopsCellsAtTheFirstFailure) {
  const auto dir = testing::make_temp_dir();
  CampaignOptions o;
  o.out_dir = dir;
  o.mode = "ci";
  const auto out = run_reported({toy()}, o, fake_cell);
  EXPECT_TRUE(all_expectations_pass(out.report));
  EXPECT_EQ(out.report["campaign"]["mode"], "ci");
  for (const auto& c : out.report["scenarios"][0]["cells"]) {
    if (c["mitigation"] == "none") {
      EXPECT_EQ(c["trials"], 2);
    }
  }
}

TEST(Campaign, ShardsMergeIntoTheSameReportAsOneRun) {
  const auto dir = testing::make_temp_dir();
  CampaignOptions o;
  o.out_dir = dir + "/whole";
  const auto whole = run_reported({toy()}, o, fake_cell);
  ResultsData merged;
  for (int i = 0; i < 3; ++i) {
    o.out_dir = dir + "/shard" + std::to_string(i);
    o.shard = {i, 3};
    const auto part = run_reported({toy()}, o, fake_cell);
    EXPECT_EQ(part.report["campaign"]["complete"], false);
    EXPECT_NE(part.results_path.find("results-shard-" + std::to_string(i + 1) + "-of-3.jsonl"), std::string::npos);
    read_results(part.results_path, &merged);
  }
  const json r = build_report(merged);
  EXPECT_TRUE(r["campaign"]["complete"].get<bool>());
  EXPECT_EQ(r["campaign"]["trials"], whole.report["campaign"]["trials"]);
  EXPECT_EQ(r["expectations"], whole.report["expectations"]);
  EXPECT_EQ(r["scenarios"][0]["mitigations"], whole.report["scenarios"][0]["mitigations"]);
}

TEST(Campaign, InterruptLeavesAValidPartialReport) {
  const auto dir = testing::make_temp_dir();
  CampaignOptions o;
  o.out_dir = dir;
  int64_t seen = 0;
  clear_interrupt();
  const auto out = run_reported({toy()}, o, [&](const CellSpec& spec, const TrialSink& sink) {
    return fake_cell(spec, [&](const TrialRecord& r) {
      if (++seen == 25) request_interrupt();  // "Ctrl-C" during the third cell
      sink(r);
    });
  });
  clear_interrupt();
  EXPECT_TRUE(out.interrupted);
  // The report on disk parses and covers exactly the trials that finished.
  std::ifstream in(dir + "/report.json");
  const json r = json::parse(in);
  EXPECT_TRUE(r["campaign"]["interrupted"].get<bool>());
  EXPECT_EQ(r["campaign"]["trials"], 25);
  EXPECT_EQ(r["campaign"]["cells_done"], 2);
  EXPECT_GT(r["expectations"]["incomplete"].get<int64_t>(), 0);
  ResultsData d;
  read_results(out.results_path, &d);
  ASSERT_EQ(d.cells.size(), 3u);
  EXPECT_TRUE(d.cells[2]["interrupted"].get<bool>());
  EXPECT_EQ(d.cells[2]["trials"], 5);
  EXPECT_FALSE(std::filesystem::exists(dir + "/report.json.tmp"));
}

}  // namespace
}  // namespace racelab::reports
