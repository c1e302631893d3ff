// The model beside real torch (reports/beside_model.h): verdicts side by side,
// the agreement marks, and the rule that an unexplained or stale disagreement
// fails the campaign; the `model` key of a scenario file is validated.
#include <gtest/gtest.h>

#include "reports/beside_model.h"
#include "campaign/scenario.h"
#include "reports/report.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;

json scenario(const std::string& name, const json& verdicts) {
  json ms = json::array();
  for (auto it = verdicts.begin(); it != verdicts.end(); ++it)
    ms.push_back({{"name", it.key()}, {"verdict", it.value()}});
  return {{"name", name}, {"race", name}, {"mitigations", ms}};
}

json pair_report(const json& known) {
  const json scenarios = json::array(
      {scenario("direct_leak", {{"none", "fails"}, {"global_lock", "holds"}, {"rw_lock", "holds"},
                                {"precompile", "holds"}, {"isolate_thread", "holds"}}),
       scenario("torch_direct_leak", {{"none", "fails"}, {"global_lock", "holds"}, {"rw_lock", "fails"},
                                      {"precompile", "no data"}, {"isolate_process", "holds"}})});
  json docs = {{"direct_leak", json::object()},
               {"torch_direct_leak", {{"model", {{"scenario", "direct_leak"}, {"known_disagreements", known}}}}}};
  json report = {{"beside_model", beside_model_json(scenarios, docs, {{"torch_direct_leak", "2.6.0"}})}};
  return report;
}

const json& row(const json& report, const std::string& mitigation) {
  for (const auto& r : report["beside_model"]["pairs"][0]["rows"])
    if (r["mitigation"] == mitigation) return r;
  static const json none;
  return none;
}

TEST(BesideModel, SetsEachVerdictBesideTheModelsWithAnAgreementMark) {
  const json r = pair_report(json::object());
  ASSERT_EQ(r["beside_model"]["pairs"].size(), 1u);
  const json& p = r["beside_model"]["pairs"][0];
  EXPECT_EQ(p["model_scenario"], "direct_leak");
  EXPECT_EQ(p["torch"], "2.6.0");
  EXPECT_EQ(row(r, "none")["agreement"], "agree");
  EXPECT_EQ(row(r, "global_lock")["agreement"], "agree");
  EXPECT_EQ(row(r, "rw_lock")["model"], "holds");
  EXPECT_EQ(row(r, "rw_lock")["pytorch"], "fails");
  EXPECT_EQ(row(r, "rw_lock")["agreement"], "disagree");
  EXPECT_EQ(row(r, "precompile")["agreement"], "incomplete");
  EXPECT_EQ(row(r, "isolate_process")["agreement"], "not modelled");
  EXPECT_EQ(r["beside_model"]["totals"]["disagree"], 1);
  EXPECT_EQ(p["summary"], "model and torch 2.6.0 agree on 2 of 3 mitigations; 0 explained disagreements, 1 unexplained");
  // An unexplained disagreement fails the campaign, and is shown in every format.
  EXPECT_FALSE(beside_model_passes(r, false));
  EXPECT_NE(beside_model_markdown(r).find("| rw_lock | holds | fails | ✘ disagree |"), std::string::npos)
      << beside_model_markdown(r);
  EXPECT_NE(beside_model_html(r).find("id=\"beside-model\""), std::string::npos);
  const std::string junit = beside_model_junit(r);
  EXPECT_NE(junit.find("name=\"rw_lock: model agrees with torch\">\n      <failure type=\"disagreement\""),
            std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<failure type=\"incomplete\""), std::string::npos);
  EXPECT_EQ(junit.find("isolate_process"), std::string::npos);  // not modelled: no test case
}

TEST(BesideModel, AListedDisagreementIsExplainedAndAStaleOneFails) {
  json r = pair_report({{"rw_lock", "torch compiles under the shared lock"}});
  EXPECT_EQ(row(r, "rw_lock")["agreement"], "explained");
  EXPECT_EQ(row(r, "rw_lock")["why"], "torch compiles under the shared lock");
  EXPECT_TRUE(beside_model_passes(r, false));
  EXPECT_FALSE(beside_model_passes(r, true));  // ci: precompile has no data yet
  r = pair_report({{"rw_lock", "why"}, {"global_lock", "listed, yet both hold"}});
  EXPECT_EQ(row(r, "global_lock")["agreement"], "stale");
  EXPECT_FALSE(beside_model_passes(r, false));
}

TEST(BesideModel, NoSectionWithoutTheModelTwinInTheCampaign) {
  const json scenarios = json::array({scenario("torch_direct_leak", {{"none", "fails"}})});
  const json docs = {{"torch_direct_leak", {{"model", {{"scenario", "direct_leak"}}}}}};
  EXPECT_TRUE(beside_model_json(scenarios, docs, json::object())["pairs"].empty());
  EXPECT_TRUE(beside_model_passes(json::object(), true));
  EXPECT_EQ(beside_model_markdown(json::object()), "");
}

TEST(BesideModel, TheModelKeyOfAScenarioIsValidated) {
  json d = json::parse(R"({
    "format": "racelab-scenario", "version": 1, "name": "ok", "description": "fine",
    "workload": "toy", "threads": [2], "strategies": [{"strategy": "random", "trials": 5}],
    "mitigations": ["none", "global_lock"],
    "expectations": {"none": {"reproduces_within": 5}, "global_lock": {"holds_over": 5}},
    "model": {"scenario": "direct_leak", "known_disagreements": {"global_lock": "why"}}})");
  EXPECT_TRUE(validate_scenario(d, "ok.json").empty());
  d["model"] = {{"scenario", "Bad Name"}, {"known_disagreements", {{"rw_lock", 3}}}, {"colour", 1}};
  std::string text;
  for (const auto& p : validate_scenario(d, "ok.json")) text += p.to_string() + "\n";
  EXPECT_NE(text.find("$.model.scenario"), std::string::npos) << text;
  EXPECT_NE(text.find("$.model.known_disagreements.rw_lock: found the key \"rw_lock\", expected a mitigation listed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("$.model.known_disagreements.rw_lock: found"), std::string::npos);
  EXPECT_NE(text.find("$.model.colour"), std::string::npos) << text;
}

}  // namespace
}  // namespace racelab::reports
