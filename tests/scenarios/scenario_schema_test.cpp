// Scenario files: the validator reports every problem with its JSON path.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "racelab/workload.h"
#include "campaign/scenario.h"
#include "tests/scenarios/problem_matchers.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;
using test_support::all;
using test_support::has;

json good() {
  return json::parse(R"({
    "format": "racelab-scenario", "version": 1, "name": "ok", "description": "fine",
    "workload": "toy", "threads": [2, 3], "seeds": [1, 2],
    "strategies": [{"strategy": "os", "trials": 20, "seconds": 5}, {"strategy": "random", "trials": 20},
                   {"strategy": "pct:3", "trials": 20, "threads": [2]}],
    "mitigations": ["none", "global_lock"],
    "expectations": {"none": {"reproduces_within": 10, "strategies": ["random", "pct:3"]},
                     "global_lock": {"holds_over": 100}}})");
}

TEST(ScenarioSchema, AcceptsAGoodFileAndParsesIt) {
  const auto ps = validate_scenario(good(), "ok.json");
  ASSERT_TRUE(ps.empty()) << all(ps);
  const Scenario s = parse_scenario(good(), "ok.json");
  EXPECT_EQ(s.race, "ok");  // defaults to the name
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(s.strategies.size(), 3u);
  EXPECT_EQ(s.strategies[2].threads, std::vector<int>{2});
  EXPECT_EQ(s.expectation_for("none")->reproduces_within, 10);
  EXPECT_TRUE(s.expectation_for("none")->matches("pct:3", 3));
  EXPECT_FALSE(s.expectation_for("none")->matches("os", 2));
}

TEST(ScenarioSchema, UnknownKeysAreErrorsAtEveryLevel) {
  json d = good();
  d["colour"] = "red";
  d["strategies"][0]["trails"] = 3;
  d["expectations"]["none"]["reproduce_within"] = 3;
  const auto ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.colour", "one of")) << all(ps);
  EXPECT_TRUE(has(ps, "$.strategies[0].trails")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.none.reproduce_within")) << all(ps);
  EXPECT_EQ(ps.size(), 3u) << all(ps);
  EXPECT_EQ(ps[0].file, "f.json");
}

TEST(ScenarioSchema, ReportsEveryProblemNotJustTheFirst) {
  json d = good();
  d["version"] = 2;
  d["name"] = "Bad Name";
  d["threads"] = {2, 2, 0};
  d["strategies"][1]["strategy"] = "pct:0";
  d["strategies"][2]["trials"] = 0;
  d["mitigations"].push_back("rw_lock");  // no expectation for it
  d["expectations"]["isolate_thread"] = {{"holds_over", 5}};  // not listed
  d["expectations"]["none"]["outcome"] = "holds";
  const auto ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.version")) << all(ps);
  EXPECT_TRUE(has(ps, "$.name", "lower-case")) << all(ps);
  EXPECT_TRUE(has(ps, "$.threads[1]", "no duplicate")) << all(ps);
  EXPECT_TRUE(has(ps, "$.threads[2]", "1 to 64")) << all(ps);
  EXPECT_TRUE(has(ps, "$.strategies[1].strategy", "pct:D")) << all(ps);
  EXPECT_TRUE(has(ps, "$.strategies[2].trials", "from 1 to 1000000000")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.rw_lock", "every listed mitigation")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.isolate_thread", "listed in $.mitigations")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.none.outcome", "failure class")) << all(ps);
}

// The strategy syntax is the engine's (engine/driver.h): what `racelab run -s`
// accepts, a scenario accepts -- except replay, which would tie a catalogue to
// a schedule file elsewhere.
TEST(ScenarioSchema, StrategiesFollowTheEngineSyntaxWithoutReplay) {
  json d = good();
  d["strategies"][0]["strategy"] = "os+jitter:0.5";
  d["strategies"][1]["strategy"] = "dfs:2";
  d["expectations"]["none"]["strategies"] = {"dfs:2", "pct:3"};
  EXPECT_TRUE(validate_scenario(d, "f.json").empty()) << all(validate_scenario(d, "f.json"));
  for (const char* bad : {"replay:x.json", "os+jitter:2", "pct", "dfs:-1", "bogus"}) {
    d["strategies"][1]["strategy"] = bad;
    EXPECT_TRUE(has(validate_scenario(d, "f.json"), "$.strategies[1].strategy", "pct:D")) << bad;
  }
}

TEST(ScenarioSchema, MissingRequiredKeysAndWrongTypes) {
  const auto ps = validate_scenario(json::parse(R"({"format": "racelab-scenario", "version": 1,
      "name": 7, "threads": "2"})"), "f.json");
  EXPECT_TRUE(has(ps, "$.name", "a string")) << all(ps);
  EXPECT_TRUE(has(ps, "$.description", "required")) << all(ps);
  EXPECT_TRUE(has(ps, "$.workload", "required")) << all(ps);
  EXPECT_TRUE(has(ps, "$.threads", "array")) << all(ps);
  EXPECT_TRUE(has(ps, "$.strategies", "required")) << all(ps);
  EXPECT_TRUE(has(ps, "$.mitigations", "required")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations", "required")) << all(ps);
  EXPECT_TRUE(has(validate_scenario(json::array(), "f.json"), "$", "scenario object"));
}

TEST(ScenarioSchema, ExpectationClausesMustBeConsistentAndAffordable) {
  json d = good();
  d["expectations"]["none"] = json::object();
  d["expectations"]["global_lock"] = {{"holds_over", 1000}};  // cells give 2*(20+20)*2 + 20*2 = 200
  auto ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.expectations.none", "at least one of")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.global_lock.holds_over", "at most 200")) << all(ps);

  d = good();
  d["expectations"]["global_lock"] = {{"allowed", {"crash", "hang"}}};  // a clause on its own
  EXPECT_TRUE(validate_scenario(d, "f.json").empty()) << all(validate_scenario(d, "f.json"));
  d["expectations"]["global_lock"] = {{"holds_over", 10}, {"outcome", "error"}};
  d["expectations"]["none"]["strategies"] = {"dfs:2"};
  d["expectations"]["none"]["threads"] = {8};
  ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.expectations.global_lock.holds_over", "not both")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.none.strategies[0]", "sweeps")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations.none.threads[0]", "$.threads")) << all(ps);
}

TEST(ScenarioSchema, ChecksWorkloadKnobsMitigationsAndFreeRunning) {
  WorkloadInfo toy{json{{"steps", 4}, {"shapes", json::array()}}, {"none", "global_lock"}, true};
  WorkloadLookup lookup = [&](const std::string& n) -> const WorkloadInfo* { return n == "toy" ? &toy : nullptr; };
  json d = good();
  d["knobs"] = {{"steps", 8}, {"stpes", 3}};
  d["mitigations"].push_back("precompile");
  d["expectations"]["precompile"] = {{"holds_over", 10}};
  auto ps = validate_scenario(d, "f.json", lookup);
  EXPECT_TRUE(has(ps, "$.knobs.stpes", "shapes, steps")) << all(ps);
  EXPECT_TRUE(has(ps, "$.mitigations[2]", "global_lock")) << all(ps);
  EXPECT_TRUE(has(ps, "$.strategies[1].strategy", "free-running")) << all(ps);
  EXPECT_FALSE(has(ps, "$.strategies[0].strategy")) << all(ps);  // os is fine
  d["workload"] = "nope";
  EXPECT_TRUE(has(validate_scenario(d, "f.json", lookup), "$.workload", "registered workload"));
}

TEST(ScenarioSchema, KnobValuesGoThroughTheWorkloadsOwnCheck) {
  WorkloadInfo toy{json{{"steps", 4}}, {"none", "global_lock"}, false, [](const json& knobs) {
                     if (knobs.value("steps", 4) < 1) throw KnobError("steps", knobs["steps"].dump(), "steps >= 1");
                   }};
  WorkloadLookup lookup = [&](const std::string& n) -> const WorkloadInfo* { return n == "toy" ? &toy : nullptr; };
  json d = good();
  d["knobs"] = {{"steps", 0}};
  auto ps = validate_scenario(d, "f.json", lookup);
  EXPECT_TRUE(has(ps, "$.knobs.steps", "steps >= 1")) << all(ps);
  d["knobs"] = {{"steps", 2}};
  EXPECT_TRUE(validate_scenario(d, "f.json", lookup).empty());
}

TEST(ScenarioSchema, AStrategyOfTheWrongTypeIsAProblemNotAnException) {
  json d = good();
  d["strategies"][1]["strategy"] = 2;  // global_lock's holds_over sums the budgets of every strategy
  std::vector<Problem> ps;
  EXPECT_NO_THROW(ps = validate_scenario(d, "f.json"));
  EXPECT_TRUE(has(ps, "$.strategies[1].strategy", "a string")) << all(ps);
}

TEST(ScenarioSchema, LoadScenariosReadsADirectoryAndRejectsDuplicatesAndBadJson) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("racelab-schema-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.json") << good().dump();
  std::ofstream(dir / "b.json") << good().dump();  // same name
  std::ofstream(dir / "c.json") << "{ not json";
  std::ofstream(dir / "notes.txt") << "ignored";
  std::vector<Problem> ps;
  const auto loaded = load_scenarios({dir.string()}, nullptr, &ps);
  EXPECT_EQ(loaded.size(), 1u);
  EXPECT_TRUE(has(ps, "$.name", "unique")) << all(ps);
  EXPECT_TRUE(has(ps, "$", "JSON document")) << all(ps);
  fs::remove_all(dir);
}

TEST(ScenarioSchema, ExpectationsByLibtorchReplaceOnlyTheNamedMitigationsOfThatVersion) {
  json d = good();
  d["expectations_by_libtorch"] = {{"2.6", {{"none", {{"holds_over", 40}}}}}};
  const auto ps = validate_scenario(d, "ok.json");
  ASSERT_TRUE(ps.empty()) << all(ps);

  const Scenario on26 = parse_scenario(d, "ok.json", "2.6.0");
  EXPECT_EQ(on26.libtorch, "2.6");
  EXPECT_EQ(on26.expectation_for("none")->holds_over, 40);
  EXPECT_EQ(on26.expectation_for("none")->reproduces_within, -1);
  EXPECT_EQ(on26.expectation_for("global_lock")->holds_over, 100);  // not named: the default

  for (const std::string v : {"1.13.1", "2.7.0", ""}) {
    const Scenario other = parse_scenario(d, "ok.json", v);
    EXPECT_EQ(other.libtorch, "") << v;
    EXPECT_EQ(other.expectation_for("none")->reproduces_within, 10) << v;
  }
}

TEST(ScenarioSchema, ExpectationsByLibtorchAreValidatedLikeExpectations) {
  json d = good();
  d["expectations_by_libtorch"] = {{"2.x", {{"none", {{"holds_over", 1}}}}},
                                   {"2.6", {{"rw_lock", {{"holds_over", 1}}}, {"none", {{"holds_ovr", 1}}}}},
                                   {"3.0", json::object()}};
  const auto ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.expectations_by_libtorch.2.x", "major.minor")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations_by_libtorch.2.6.rw_lock", "listed in $.mitigations")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations_by_libtorch.2.6.none.holds_ovr")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations_by_libtorch.3.0", "non-empty")) << all(ps);

  json budget = good();  // far more trials than global_lock's cells get at full budget
  budget["expectations_by_libtorch"] = {{"2.6", {{"global_lock", {{"holds_over", 100000}}}}}};
  EXPECT_TRUE(has(validate_scenario(budget, "f.json"), "$.expectations_by_libtorch.2.6.global_lock.holds_over",
                  "at most"));
}

TEST(ScenarioSchema, LibtorchKeyIsMajorDotMinor) {
  EXPECT_EQ(libtorch_key("2.6.0"), "2.6");
  EXPECT_EQ(libtorch_key("2.11.0+cu130"), "2.11");
  EXPECT_EQ(libtorch_key("1.13.1"), "1.13");
  EXPECT_EQ(libtorch_key("2.6"), "2.6");
}

TEST(Catalogue, EveryScenarioFileIsStructurallyValid) {
  std::vector<Problem> ps;
  const auto loaded = load_scenarios(
      {std::string(RACELAB_SOURCE_DIR) + "/scenarios", std::string(RACELAB_SOURCE_DIR) + "/scenarios/search"},
      nullptr, &ps);
  EXPECT_TRUE(ps.empty()) << all(ps);
  EXPECT_GE(loaded.size(), 13u);
  for (const auto& s : loaded) {
    EXPECT_EQ(std::filesystem::path(s.file).stem().string(), s.name);
    // Each scenario has an expectation for every mitigation it sweeps...
    EXPECT_EQ(s.expectations.size(), s.mitigations.size()) << s.file;
    // ...and compares os, random and pct unless the race only exists free-running.
    std::vector<std::string> kinds;
    for (const auto& b : s.strategies) kinds.push_back(b.strategy.substr(0, b.strategy.find(':')));
    const bool controlled = std::count(kinds.begin(), kinds.end(), "random") > 0;
    if (controlled) {
      EXPECT_TRUE(std::count(kinds.begin(), kinds.end(), "pct")) << s.file;
      EXPECT_TRUE(std::count(kinds.begin(), kinds.end(), "os")) << s.file;
    }
  }
}

// The default list (`racelab compare scenarios/`, `bash ci/compare`, `racelab
// ci`'s default) is about mitigations: every scenario in it sweeps one besides
// `none`, so no column of the report's matrix reads "not swept" all the way
// down. The search benchmarks, which sweep only `none`, live in
// scenarios/search/ (a directory is read without its subdirectories), where
// `racelab bench --sections search` runs their workloads and each file still
// runs by name.
TEST(Catalogue, TheDefaultListComparesMitigationsAndTheSearchBenchmarksLiveApart) {
  std::vector<Problem> ps;
  const auto main_list = load_scenarios({std::string(RACELAB_SOURCE_DIR) + "/scenarios"}, nullptr, &ps);
  EXPECT_TRUE(ps.empty()) << all(ps);
  for (const auto& s : main_list) {
    EXPECT_TRUE(std::any_of(s.mitigations.begin(), s.mitigations.end(), [](const std::string& m) { return m != "none"; }))
        << s.file << " sweeps no mitigation: it belongs in scenarios/search/ or another subfolder";
    EXPECT_NE(s.name.rfind("hard_", 0), 0u) << s.file;
  }
  const auto search = load_scenarios({std::string(RACELAB_SOURCE_DIR) + "/scenarios/search"}, nullptr, &ps);
  EXPECT_TRUE(ps.empty()) << all(ps);
  std::vector<std::string> names;
  for (const auto& s : search) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"hard_depth3", "hard_long_prefix", "hard_order8"}));
}

// A scenario whose model follows torch 2.14 with a knob, and whose verdict for
// `none` differs there.
json by_torch() {
  json d = good();
  d["knobs"] = {{"steps", 2}};
  d["knobs_by_torch"] = {{"2.14", {{"scope", "thread_local"}}}};
  d["expectations_by_torch"] = {{"2.14", {{"none", {{"holds_over", 40}}}}}};
  return d;
}

TEST(ScenarioSchema, ByTorchEntriesApplyOnlyForThatTorch) {
  const json d = by_torch();
  ASSERT_TRUE(validate_scenario(d, "ok.json").empty()) << all(validate_scenario(d, "ok.json"));
  for (const std::string v : {"2.14.1", "2.14", "2.14.0+cpu"}) {
    const Scenario s = parse_scenario(d, "ok.json", "1.13.0", v);
    EXPECT_EQ(s.torch, "2.14") << v;
    EXPECT_EQ(s.knobs, (json{{"steps", 2}, {"scope", "thread_local"}})) << v;
    EXPECT_EQ(s.expectation_for("none")->holds_over, 40) << v;
    EXPECT_EQ(s.expectation_for("global_lock")->holds_over, 100) << v;  // not named: the default
  }
  for (const std::string v : {"2.6.0", "2.1", ""}) {
    const Scenario s = parse_scenario(d, "ok.json", "1.13.0", v);
    EXPECT_EQ(s.torch, "") << v;
    EXPECT_EQ(s.knobs, (json{{"steps", 2}})) << v;
    EXPECT_EQ(s.expectation_for("none")->reproduces_within, 10) << v;
  }
  // The torch's entry wins over the LibTorch's for the same mitigation.
  json both = d;
  both["expectations_by_libtorch"] = {{"1.13", {{"none", {{"holds_over", 20}}}}}};
  EXPECT_EQ(parse_scenario(both, "ok.json", "1.13.0", "2.14.1").expectation_for("none")->holds_over, 40);
  EXPECT_EQ(parse_scenario(both, "ok.json", "1.13.0", "2.6.0").expectation_for("none")->holds_over, 20);
}

TEST(ScenarioSchema, ByTorchEntriesAreValidatedKnobsAsTheWorkloadRunsThem) {
  WorkloadInfo toy{json{{"steps", 4}, {"scope", "global"}}, {"none", "global_lock"}, false, [](const json& knobs) {
                     const json s = knobs.value("scope", json("global"));
                     if (s != "global" && s != "thread_local")
                       throw KnobError("scope", s.dump(), "global | thread_local");
                     if (knobs.value("steps", 4) < 1) throw KnobError("steps", knobs["steps"].dump(), "steps >= 1");
                   }};
  WorkloadLookup lookup = [&](const std::string& n) -> const WorkloadInfo* { return n == "toy" ? &toy : nullptr; };
  EXPECT_TRUE(validate_scenario(by_torch(), "f.json", lookup).empty()) << all(validate_scenario(by_torch(), "f.json", lookup));
  json d = by_torch();
  d["knobs_by_torch"] = {{"2.14", {{"scope", "per_process"}, {"scpoe", 1}}}, {"2.x", {{"steps", 1}}}, {"2.15", json::object()}};
  d["expectations_by_torch"] = {{"2.14", {{"rw_lock", {{"holds_over", 1}}}}}, {"two", {{"none", {{"holds_over", 1}}}}}};
  const auto ps = validate_scenario(d, "f.json", lookup);
  EXPECT_TRUE(has(ps, "$.knobs_by_torch.2.14.scpoe", "a knob of workload toy")) << all(ps);
  EXPECT_TRUE(has(ps, "$.knobs_by_torch.2.x", "major.minor")) << all(ps);
  EXPECT_TRUE(has(ps, "$.knobs_by_torch.2.15", "non-empty")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations_by_torch.2.14.rw_lock", "listed in $.mitigations")) << all(ps);
  EXPECT_TRUE(has(ps, "$.expectations_by_torch.two", "a torch version as major.minor")) << all(ps);
  // A value is checked merged with the scenario's knobs, by the workload's own check.
  json bad_value = by_torch();
  bad_value["knobs_by_torch"] = {{"2.14", {{"scope", "per_process"}}}};
  EXPECT_TRUE(has(validate_scenario(bad_value, "f.json", lookup), "$.knobs_by_torch.2.14.scope", "global | thread_local"));
  json bad_merge = by_torch();
  bad_merge["knobs"] = {{"steps", 0}};  // fine alone? no: steps >= 1 fails for $.knobs and for the merged 2.14 set
  EXPECT_TRUE(has(validate_scenario(bad_merge, "f.json", lookup), "$.knobs_by_torch.2.14.steps", "steps >= 1"));
}

}  // namespace
}  // namespace racelab::reports
