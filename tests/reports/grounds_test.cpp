// What every verdict rests on (reports/grounds.h) and the exhaustiveness
// expectation `"holds": {"exhaustive_preemptions": P}`, in every format.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "fixtures.h"
#include "campaign/scenario.h"
#include "reports/report.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::toy_results;

const json& mitigation(const json& report, const char* name) {
  for (const auto& m : report["scenarios"][0]["mitigations"])
    if (m["name"] == name) return m;
  throw std::runtime_error(std::string("no mitigation ") + name);
}

// The toy campaign with PCT's learned parameters in its pct:2 cells.
ResultsData with_pct_params(ResultsData d) {
  for (auto& c : d.cells)
    if (c["strategy"] == "pct:2") c["pct"] = {{"d", 2}, {"k", 10}, {"n", 3}};
  return d;
}

TEST(Grounds, HoldsRestsOnItsTrialsAndThePctBoundAtTheMeasuredK) {
  const json r = build_report(with_pct_params(toy_results(make_temp_dir())));
  const json& g = mitigation(r, "global_lock")["grounds"];
  EXPECT_EQ(g["kind"], "sampled");
  const std::string text = g["text"].get<std::string>();
  EXPECT_NE(text.find("no failure in 40 trials of strategies pct:2 (20), random (20)"), std::string::npos) << text;
  ASSERT_EQ(g["pct"].size(), 1u);
  EXPECT_EQ(g["pct"][0]["d"], 2);
  EXPECT_EQ(g["pct"][0]["k"], 10);
  EXPECT_EQ(g["pct"][0]["trials"], 20);
  // Every one of the 20 pct:2 trials hits a depth-2 bug with probability >= 0.05.
  EXPECT_NEAR(g["pct"][0]["escape"].get<double>(), std::pow(0.95, 20), 1e-9);
  EXPECT_NE(text.find("depth-2 bug"), std::string::npos) << text;
  EXPECT_NE(text.find("k=10"), std::string::npos) << text;
}

TEST(Grounds, FailsStatesTheFewestPreemptionsAndTheMinimisedOnes) {
  const auto dir = make_temp_dir();
  ResultsData d = toy_results(dir);
  json min = testing::schedule_doc();
  min["preemptions"] = 1;
  std::ofstream(dir + "/toy.schedule.min.json") << min.dump();
  const json r = build_report(d);
  const json& g = mitigation(r, "none")["grounds"];
  EXPECT_EQ(g["kind"], "failing");
  EXPECT_EQ(g["fewest_preemptions"], 2) << "the 2-thread random cells failed with 2, the others with 4";
  EXPECT_EQ(g["minimized_preemptions"], 1);
  EXPECT_EQ(g["text"], "fewest preemptions of a failing schedule: 2 (minimised: 1)");
}

TEST(Grounds, APortfolioNamesTheTrialsOfEachArm) {
  ResultsData d = toy_results(make_temp_dir());
  for (auto& t : d.trials)
    if (t.mitigation == "global_lock" && t.strategy == "random") {
      t.strategy = "auto";
      t.metrics["strategy_used"] = t.trial % 2 ? "surw" : "pos";
    }
  // The scenario sweeps auto instead of random.
  json& doc = d.headers[0]["scenarios"][0];
  doc["strategies"][0]["strategy"] = "auto";
  doc["expectations"]["none"]["strategies"] = json::array({"pct:2"});
  for (auto& c : d.cells)
    if (c["strategy"] == "random") c["strategy"] = "auto";
  const json r = build_report(d);
  const std::string text = mitigation(r, "global_lock")["grounds"]["text"].get<std::string>();
  EXPECT_NE(text.find("auto [pos 10, surw 10]"), std::string::npos) << text;
}

// A scenario whose global_lock must hold exhaustively up to 2 preemptions.
ResultsData exhaustive_results(bool complete) {
  ResultsData d = toy_results(make_temp_dir());
  json& doc = d.headers[0]["scenarios"][0];
  doc["strategies"][1]["strategy"] = "dfs:2";
  doc["expectations"]["none"] = {{"reproduces_within", 5}, {"outcome", "error"}, {"strategies", {"random"}}};
  doc["expectations"]["global_lock"] = {{"holds", {{"exhaustive_preemptions", 2}}}};
  for (auto& t : d.trials)
    if (t.strategy == "pct:2") t.strategy = "dfs:2";
  for (auto& c : d.cells)
    if (c["strategy"] == "pct:2") {
      c["strategy"] = "dfs:2";
      c["exhausted"] = complete;
    }
  return d;
}

TEST(Grounds, ExhaustiveSearchIsTheStrongerGroundAndSatisfiesTheExpectation) {
  const json r = build_report(exhaustive_results(true));
  const json& lock = mitigation(r, "global_lock");
  EXPECT_EQ(lock["grounds"]["kind"], "exhaustive");
  const std::string text = lock["grounds"]["text"].get<std::string>();
  EXPECT_EQ(text.rfind("exhaustive up to 2 preemptions, 20 schedules, complete (2, 4 threads)", 0), 0u) << text;
  EXPECT_EQ(lock["check"]["status"], "pass") << lock["check"].dump(1);
  EXPECT_EQ(lock["check"]["describe"], "holds exhaustively up to 2 preemptions");
  // Every format says it.
  EXPECT_NE(render_markdown(r).find("exhaustive up to 2 preemptions"), std::string::npos);
  EXPECT_NE(render_html(r).find("rests on: exhaustive up to 2 preemptions"), std::string::npos);
  EXPECT_NE(render_junit(r).find("holds, resting on: exhaustive up to 2 preemptions"), std::string::npos);
}

TEST(Grounds, DporCellsCountClassesAndSatisfyTheExpectationToo) {
  ResultsData d = exhaustive_results(true);
  json& doc = d.headers[0]["scenarios"][0];
  doc["strategies"][1]["strategy"] = "dpor:2";
  for (auto& t : d.trials)
    if (t.strategy == "dfs:2") t.strategy = "dpor:2";
  for (auto& c : d.cells)
    if (c["strategy"] == "dfs:2") {
      c["strategy"] = "dpor:2";
      c["classes"] = 3;
    }
  const json r = build_report(d);
  const json& lock = mitigation(r, "global_lock");
  EXPECT_EQ(lock["grounds"]["kind"], "exhaustive");
  EXPECT_EQ(lock["grounds"]["classes"], 6);
  const std::string text = lock["grounds"]["text"].get<std::string>();
  EXPECT_EQ(text.rfind("exhaustive up to 2 preemptions, 6 classes in 20 schedules, complete (2, 4 threads)", 0), 0u)
      << text;
  EXPECT_EQ(lock["check"]["status"], "pass") << lock["check"].dump(1);
}

TEST(Grounds, AnIncompleteSearchFailsTheExhaustivenessExpectation) {
  const json r = build_report(exhaustive_results(false));
  const json& lock = mitigation(r, "global_lock");
  EXPECT_EQ(lock["grounds"]["kind"], "sampled") << "an incomplete dfs proves nothing beyond its trials";
  EXPECT_EQ(lock["check"]["status"], "fail");
  EXPECT_NE(lock["check"]["clauses"][0]["measured"].get<std::string>().find("not complete for 2, 4 threads"),
            std::string::npos)
      << lock["check"].dump(1);
}

TEST(Grounds, ExhaustivenessNeedsADfsBoundTheScenarioSweeps) {
  json doc = exhaustive_results(true).headers[0]["scenarios"][0];
  doc.erase("__file");
  EXPECT_TRUE(validate_scenario(doc, "ok.json").empty() ||
              validate_scenario(doc, "ok.json")[0].path.find("holds") == std::string::npos);
  doc["expectations"]["global_lock"]["holds"]["exhaustive_preemptions"] = 3;
  bool flagged = false;
  for (const auto& p : validate_scenario(doc, "f.json"))
    flagged |= p.path == "$.expectations.global_lock.holds.exhaustive_preemptions";
  EXPECT_TRUE(flagged) << "dfs:2 cannot prove a bound of 3";
  doc["expectations"]["global_lock"] = {{"holds", {{"exhaustive_preemptions", 2}}}, {"outcome", "error"}};
  flagged = false;
  for (const auto& p : validate_scenario(doc, "f.json")) flagged |= p.path == "$.expectations.global_lock.holds";
  EXPECT_TRUE(flagged) << "holds and outcome contradict each other";
}

}  // namespace
}  // namespace racelab::reports
