// build_report(): aggregation, Wilson intervals, expectation checks, timeline choice.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "reports/report.h"
#include "reports/stats.h"

namespace racelab::reports {

namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::toy_results;

// `name` is a const char*: g++ 14 takes a reference returned from a call with a
// temporary std::string argument for a dangling one (-Wdangling-reference).
const json& mitigation(const json& report, const char* name) {
  for (const auto& m : report["scenarios"][0]["mitigations"])
    if (m["name"] == name) return m;
  throw std::runtime_error(std::string("no mitigation ") + name);
}

TEST(Wilson, HonestAtZeroFailures) {
  const Interval w = wilson_interval(0, 500);
  EXPECT_EQ(w.low, 0.0);
  EXPECT_NEAR(w.high, 0.00762, 1e-4);  // 3.84 / (500 + 3.84)
  const Interval half = wilson_interval(5, 10);
  EXPECT_NEAR(half.low + half.high, 1.0, 1e-12);
  const Interval none = wilson_interval(0, 0);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_EQ(none.high, 1.0);
}

TEST(BuildReport, AggregatesMitigationsAndChecksExpectations) {
  const auto dir = make_temp_dir();
  const json r = build_report(toy_results(dir));
  EXPECT_EQ(r["format"], kReportFormat);
  EXPECT_EQ(r["version"], kReportVersion);
  EXPECT_TRUE(r["campaign"]["complete"].get<bool>());
  EXPECT_EQ(r["campaign"]["cells_planned"], 12);

  const json& none = mitigation(r, "none");
  EXPECT_EQ(none["trials"], 40);
  EXPECT_EQ(none["failures"], 4);
  EXPECT_EQ(none["verdict"], "fails");
  EXPECT_EQ(none["check"]["status"], "pass") << none["check"].dump(1);
  const Interval w = wilson_interval(4, 40);
  EXPECT_DOUBLE_EQ(none["wilson"][0].get<double>(), w.low);

  const json& lock = mitigation(r, "global_lock");
  EXPECT_EQ(lock["verdict"], "holds");
  EXPECT_EQ(lock["check"]["status"], "pass");
  // Cost is measured in free-running (`os`) cells only, and there are none.
  EXPECT_TRUE(lock["cost"].is_null());

  const json& off = mitigation(r, "disable_check");
  EXPECT_EQ(off["failure_classes"], json::array({"silent_fallback"}));
  EXPECT_EQ(off["check"]["status"], "pass");
  EXPECT_EQ(r["expectations"]["passed"], 3);
  EXPECT_TRUE(all_expectations_pass(r));

  // The cell view: first failure is the 2nd trial of each `none` cell.
  for (const auto& c : r["scenarios"][0]["cells"]) {
    if (c["mitigation"] == "none") {
      EXPECT_EQ(c["first_failure_trial"], 2);
    }
  }
}

TEST(BuildReport, ReproducesWithinFailsWhenTheFirstFailureIsLate) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  // Move the failure of one `none` cell from trial 2 to trial 7 (limit is 5).
  for (auto& t : data.trials)
    if (t.mitigation == "none" && t.threads == 4 && t.strategy == "pct:2") t.outcome = t.trial == 6 ? "error" : "holds";
  const json r = build_report(data);
  const json& none = mitigation(r, "none");
  EXPECT_EQ(none["check"]["status"], "fail");
  EXPECT_NE(none["check"]["clauses"][0]["measured"].get<std::string>().find("4 threads, pct:2"), std::string::npos);
  EXPECT_FALSE(all_expectations_pass(r));
}

TEST(BuildReport, HoldsOverFailsOnAnyFailureAndStrayClassesFailOutcome) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  data.trials.back().outcome = "error";  // last trial is disable_check, pct:2, 4 threads
  for (auto& t : data.trials)
    if (t.mitigation == "global_lock" && t.trial == 9 && t.threads == 2 && t.strategy == "random") t.outcome = "hang";
  const json r = build_report(data);
  EXPECT_EQ(mitigation(r, "global_lock")["check"]["status"], "fail");
  const json& off = mitigation(r, "disable_check");
  EXPECT_EQ(off["check"]["status"], "fail");
  EXPECT_NE(off["check"]["clauses"][0]["measured"].get<std::string>().find("1 error"), std::string::npos);
}

TEST(BuildReport, InfrastructureTrialsCountNeitherAsFailuresNorAsHolds) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  // A worker of `global_lock` killed from outside past its retries (the OOM
  // killer): not a race, so the mitigation does not fail; but not a pass
  // either, so 39 counted trials fall short of holds_over 40.
  for (auto& t : data.trials)
    if (t.mitigation == "global_lock" && t.trial == 4 && t.threads == 2 && t.strategy == "random")
      t.outcome = "infrastructure";
  const json r = build_report(data);
  const json& lock = mitigation(r, "global_lock");
  EXPECT_EQ(lock["failures"], 0);
  EXPECT_EQ(lock["trials"], 39);
  EXPECT_EQ(lock["verdict"], "holds");
  EXPECT_EQ(lock["by_outcome"]["infrastructure"], 1);
  EXPECT_EQ(lock["check"]["status"], "fail");
  const std::string measured = lock["check"]["clauses"][0]["measured"].get<std::string>();
  EXPECT_NE(measured.find("only 39 of the 40"), std::string::npos) << measured;
  EXPECT_NE(measured.find("1 more killed from outside"), std::string::npos) << measured;
}

TEST(BuildReport, PartialCampaignIsIncompleteNotFailed) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  // Keep only the first 25 trials and 2 finished cells, as if killed.
  data.trials.resize(25);
  data.cells.resize(2);
  data.ends.clear();
  const json r = build_report(data);
  EXPECT_TRUE(r["campaign"]["interrupted"].get<bool>());
  EXPECT_FALSE(r["campaign"]["complete"].get<bool>());
  EXPECT_EQ(r["campaign"]["cells_done"], 2);
  EXPECT_EQ(r["campaign"]["trials"], 25);
  // `none` reproduced in the cells that ran and the others are pending.
  EXPECT_EQ(mitigation(r, "none")["check"]["status"], "incomplete");
  EXPECT_EQ(mitigation(r, "global_lock")["check"]["status"], "incomplete");
  EXPECT_FALSE(all_expectations_pass(r));
}

TEST(BuildReport, HoldsOverScalesWithTheBudget) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  data.headers[0]["budget_scale"] = 0.5;  // cells then plan 5 trials, holds_over needs 20
  const json r = build_report(data);
  EXPECT_EQ(mitigation(r, "global_lock")["check"]["status"], "pass");
  EXPECT_NE(mitigation(r, "global_lock")["check"]["clauses"][0]["measured"].get<std::string>().find("needed 20"),
            std::string::npos);
}

TEST(BuildReport, TimelineIsTheShortestFailingScheduleOfTheBaseline) {
  const auto dir = make_temp_dir();
  const json r = build_report(toy_results(dir));
  const json& tl = r["scenarios"][0]["timeline"];
  ASSERT_FALSE(tl.is_null());
  EXPECT_EQ(tl["mitigation"], "none");
  EXPECT_EQ(tl["threads"], 2);  // the 2-preemption failure, not the 4-preemption ones
  EXPECT_EQ(tl["strategy"], "random");
  EXPECT_EQ(tl["schedule"]["outcome"]["failing_step"], 4);
}

TEST(BuildReport, MissingScheduleFileIsReportedNotFatal) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  std::filesystem::remove(dir + "/toy.schedule.json");
  const json r = build_report(data);
  const json& tl = r["scenarios"][0]["timeline"];
  EXPECT_TRUE(tl["schedule"].is_null());
  EXPECT_NE(tl["problem"].get<std::string>().find("not readable"), std::string::npos);
}

TEST(BuildReport, MergeRejectsDifferentBudgetScales) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  auto second = data.headers[0];
  second["budget_scale"] = 0.25;
  second["shard"] = {2, 2};
  data.headers.push_back(second);
  EXPECT_THROW(build_report(data), std::runtime_error);
}

TEST(BuildReport, MergeRejectsDifferentLibtorchVersions) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  data.headers[0]["libtorch"] = "1.13.1";
  auto second = data.headers[0];
  second["libtorch"] = "2.6.0";
  second["shard"] = {2, 2};
  data.headers.push_back(second);
  EXPECT_THROW(build_report(data), std::runtime_error);
}

TEST(BuildReport, JudgesWithTheExpectationsOfTheLibtorchItRanOn) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  // On "2.6", `none` is expected to hold; the toy's `none` fails at trial 2 of every cell.
  data.headers[0]["scenarios"][0]["expectations_by_libtorch"] = {{"2.6", {{"none", {{"holds_over", 10}}}}}};
  auto none_status = [&](const std::string& libtorch) {
    data.headers[0]["libtorch"] = libtorch;
    const json r = build_report(data);
    EXPECT_EQ(r["libtorch"], libtorch);
    return mitigation(r, "none")["check"]["status"].get<std::string>();
  };
  EXPECT_EQ(none_status("1.13.1"), "pass");
  EXPECT_EQ(none_status("2.6.0"), "fail");
  EXPECT_EQ(none_status("2.7.0"), "pass");
}

}  // namespace
}  // namespace racelab::reports

namespace racelab::reports {
namespace {

TEST(BuildReport, AllowedAloneToleratesListedClassesOnly) {
  const auto dir = testing::make_temp_dir();
  auto data = testing::toy_results(dir);
  data.headers[0]["scenarios"][0]["expectations"]["global_lock"] = {{"allowed", {"crash", "hang"}}};
  auto status = [&] {
    const auto r = build_report(data);
    return r["scenarios"][0]["mitigations"][1]["check"]["status"].get<std::string>();
  };
  EXPECT_EQ(status(), "pass");  // no failure at all is fine
  for (auto& t : data.trials)
    if (t.mitigation == "global_lock" && t.trial == 3 && t.threads == 2) t.outcome = "hang";
  EXPECT_EQ(status(), "pass");
  for (auto& t : data.trials)
    if (t.mitigation == "global_lock" && t.trial == 4 && t.threads == 4) t.outcome = "error";
  EXPECT_EQ(status(), "fail");
}

}  // namespace
}  // namespace racelab::reports
