// Where a campaign's time went (reports/time_split.h), on a hand-made report.
#include <gtest/gtest.h>

#include "reports/time_split.h"

namespace racelab::reports {

namespace {

using nlohmann::json;

json cell(const std::string& mitigation, int threads, const std::string& strategy, int64_t trials, double trial_ms) {
  return {{"mitigation", mitigation}, {"threads", threads}, {"strategy", strategy}, {"seed", 1},
          {"trials", trials},         {"trial_ms", trial_ms}};
}

TEST(TimeSplit, PerScenarioTimesSharesAndTheProcessOverThreadRatio) {
  const json report = {
      {"campaign", {{"wall_s", 10.0}, {"idle_share", 0.25}, {"jobs", 2}}},
      {"scenarios",
       {{{"name", "micro"}, {"workload", "direct_leak"}, {"cells", {cell("isolate_process", 2, "random", 100, 10), cell("isolate_thread", 2, "random", 100, 10)}}},
        {{"name", "trainer"},
         {"workload", "trainer"},
         {"cells",
          {cell("isolate_thread", 2, "os", 2, 1000), cell("isolate_process", 2, "os", 2, 1500),
           cell("isolate_thread", 4, "os", 2, 2000), cell("isolate_process", 4, "os", 2, 3000),
           // Only one side ran at 8 threads: left out of the ratio.
           cell("isolate_process", 8, "os", 2, 90000)}}}}}};
  const json s = time_split(report);
  EXPECT_EQ(s["trials"], 210);
  ASSERT_EQ(s["scenarios"].size(), 2u);
  EXPECT_EQ(s["scenarios"][0]["name"], "trainer") << "costliest first";
  EXPECT_NEAR(s["scenarios"][0]["trial_s"].get<double>(), 2 * (1 + 1.5 + 2 + 3 + 90), 1e-9);
  EXPECT_NEAR(s["scenarios"][1]["per_trial_ms"].get<double>(), 10, 1e-9);
  EXPECT_NEAR(s["scenarios"][0]["share"].get<double>() + s["scenarios"][1]["share"].get<double>(), 1, 1e-9);
  ASSERT_EQ(s["isolate_process_over_thread"].size(), 1u) << "only the trainer runs processes";
  const json& r = s["isolate_process_over_thread"][0];
  EXPECT_EQ(r["cells"], 2);
  EXPECT_NEAR(r["process_ms"].get<double>(), 2250, 1e-9);
  EXPECT_NEAR(r["thread_ms"].get<double>(), 1500, 1e-9);
  EXPECT_NEAR(r["ratio"].get<double>(), 1.5, 1e-9);
  EXPECT_EQ(s["idle_share"], 0.25);
  const std::string md = time_split_markdown(s);
  EXPECT_NE(md.find("| trainer | 10 |"), std::string::npos) << md;
  EXPECT_NE(md.find("1.50x"), std::string::npos) << md;
  EXPECT_NE(md.find("idle 25.0%"), std::string::npos) << md;
}

TEST(TimeSplit, ACompileLayerTrialsPhasesAndTheHarnessShareWeightedByTrials) {
  json a = cell("none", 2, "random", 10, 20);  // 10 trials of 20 ms, 15 of them in the body
  a["cpu_ms"] = {{"trace", 2.0}, {"run", 1.0}, {"trial", 5.0}};
  a["body_ms"] = 15.0;
  json b = cell("global_lock", 2, "random", 30, 8);  // 30 trials of 8 ms, 6 in the body
  b["cpu_ms"] = {{"trace", 4.0}, {"run", 0.0}, {"trial", 5.0}};
  b["body_ms"] = 6.0;
  const json report = {{"scenarios", {{{"name", "stuck_true"}, {"workload", "stuck_true"}, {"cells", {a, b}}},
                                      {{"name", "hard"}, {"workload", "hard_order8"}, {"cells", {cell("none", 2, "random", 5, 1)}}}}}};
  const json s = time_split(report);
  const json& st = s["scenarios"][0];
  ASSERT_EQ(st["name"], "stuck_true");
  EXPECT_NEAR(st["cpu_ms"]["trace"].get<double>(), (10 * 2.0 + 30 * 4.0) / 40, 1e-9);
  EXPECT_NEAR(st["cpu_ms"]["run"].get<double>(), 10 * 1.0 / 40, 1e-9);
  EXPECT_NEAR(st["cpu_ms"]["trial"].get<double>(), 5.0, 1e-9);
  EXPECT_NEAR(st["cpu_ms"]["other"].get<double>(), 5.0 - 3.5 - 0.25, 1e-9) << "the trial's CPU less its phases";
  EXPECT_NEAR(st["body_ms"].get<double>(), (10 * 15.0 + 30 * 6.0) / 40, 1e-9);
  EXPECT_NEAR(st["harness_ms"].get<double>(), (10 * 5.0 + 30 * 2.0) / 40.0, 1e-9);
  EXPECT_FALSE(s["scenarios"][1].contains("cpu_ms")) << "a workload that reports no phases has none";
  const std::string md = time_split_markdown(s);
  EXPECT_NE(md.find("| stuck_true | 0.00 | 3.50 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| hard | 0.00"), std::string::npos) << md;
}

TEST(TimeSplit, TheTimeBetweenTrialsIsTheCellsWallTimeLessTheirTrials) {
  json a = cell("none", 2, "random", 10, 20);  // 10 trials of 20 ms in a cell of 0.25 s: 5 ms each between
  a["wall_s"] = 0.25;
  json b = cell("none", 3, "random", 30, 10);  // 30 of 10 ms in 0.33 s: 1 ms each
  b["wall_s"] = 0.33;
  json untimed = cell("none", 4, "random", 60, 10);  // no wall_s (an older report): left out
  const json report = {{"scenarios", {{{"name", "stuck_true"}, {"workload", "stuck_true"}, {"cells", {a, b, untimed}}},
                                      {{"name", "old"}, {"workload", "direct_leak"}, {"cells", {untimed}}}}}};
  const json s = time_split(report);
  ASSERT_EQ(s["scenarios"][0]["name"], "stuck_true");
  EXPECT_NEAR(s["scenarios"][0]["between_trials_ms"].get<double>(), (10 * 5.0 + 30 * 1.0) / 40, 1e-9);
  EXPECT_FALSE(s["scenarios"][1].contains("between_trials_ms"));
  const std::string md = time_split_markdown(s);
  EXPECT_NE(md.find("| 2.00 ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 10.0 ms | - |"), std::string::npos) << md;
}

}  // namespace
}  // namespace racelab::reports
