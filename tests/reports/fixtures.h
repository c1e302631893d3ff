// Hand-made campaign data for the report tests: one scenario, three
// mitigations, two strategies, records and a schedule file written to a
// temporary directory.
#ifndef RACELAB_TESTS_REPORTS_FIXTURES_H_
#define RACELAB_TESTS_REPORTS_FIXTURES_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/results_log.h"
#include "campaign/scenario.h"

namespace racelab::reports::testing {

using namespace racelab::campaign;

// A fresh directory, removed when the test binary exits.
inline std::string make_temp_dir() {
  static std::vector<std::string> made;
  static const bool registered = [] {
    std::atexit([] {
      std::error_code ec;
      for (const auto& d : made) std::filesystem::remove_all(d, ec);
    });
    return true;
  }();
  (void)registered;
  std::string tmpl = (std::filesystem::temp_directory_path() / "racelab-test-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) std::abort();
  made.push_back(tmpl);
  return tmpl;
}

inline nlohmann::json scenario_doc() {
  return nlohmann::json::parse(R"({
    "format": "racelab-scenario", "version": 1, "name": "toy_leak", "race": "toy leak",
    "description": "A hand-made scenario for report tests.", "workload": "toy",
    "threads": [2, 4], "seeds": [1],
    "strategies": [{"strategy": "random", "trials": 10}, {"strategy": "pct:2", "trials": 10}],
    "mitigations": ["none", "global_lock", "disable_check"],
    "expectations": {
      "none": {"reproduces_within": 5, "outcome": "error", "why": "the flag leaks"},
      "global_lock": {"holds_over": 40},
      "disable_check": {"outcome": "silent_fallback"}
    }
  })");
}

inline nlohmann::json schedule_doc() {
  return nlohmann::json::parse(R"({
    "format": "racelab-schedule", "version": 1, "racelab_version": "0.1.0", "scenario": "toy_leak",
    "workload": "toy", "knobs": {}, "mitigation": "none", "threads": 2, "strategy": "random", "seed": 1,
    "decisions": [{"step": 0, "thread": 1, "point": "capture.flag_set", "preemption": false},
                  {"step": 3, "thread": 2, "point": "compiled.check", "preemption": true},
                  {"step": 6, "thread": 1, "point": "capture.flag_restore", "preemption": true}],
    "events": [{"step": 0, "thread": 1, "kind": "start", "what": ""},
               {"step": 1, "thread": 1, "kind": "acquire", "what": "compile_lock"},
               {"step": 2, "thread": 1, "kind": "point", "what": "capture.flag_set"},
               {"step": 3, "thread": 2, "kind": "block", "what": "compile_lock"},
               {"step": 4, "thread": 2, "kind": "point", "what": "compiled.check"},
               {"step": 5, "thread": 1, "kind": "release", "what": "compile_lock"},
               {"step": 6, "thread": 2, "kind": "acquire", "what": "compile_lock"},
               {"step": 7, "thread": 2, "kind": "release", "what": "compile_lock"}],
    "outcome": {"class": "error", "detail": "nested FX trace", "failing_step": 4},
    "preemptions": 2, "minimized_from_preemptions": 5})");
}

inline TrialRecord record(const std::string& mitigation, const std::string& strategy, int threads, int64_t trial,
                          const std::string& outcome, const std::string& schedule = "", int64_t preemptions = 0) {
  TrialRecord r;
  r.scenario = "toy_leak";
  r.workload = "toy";
  r.mitigation = mitigation;
  r.strategy = strategy;
  r.outcome = outcome;
  r.detail = outcome == "holds" ? "" : "detail of " + outcome;
  r.knobs = nlohmann::json::object();
  r.threads = threads;
  r.seed = 1000 + trial;  // a trial's own seed differs from its cell's
  r.trial = trial;
  r.steps = 10;
  r.preemptions = preemptions;
  r.wall_ms = 1.5;
  r.compact = outcome == "holds" ? "" : "AAEC";
  r.schedule_file = schedule;
  r.metrics = {{"steps_per_s", mitigation == "global_lock" ? 50.0 : 100.0}};
  return r;
}

// A complete campaign at budget scale 1: `none` fails at trial 2 of every
// cell, `global_lock` holds in all 40 trials, `disable_check` falls back
// silently once per cell.
inline ResultsData toy_results(const std::string& dir) {
  ResultsData d;
  nlohmann::json doc = scenario_doc();
  doc["__file"] = "toy_leak.json";
  d.headers.push_back({{"format", kResultsFormat},
                       {"version", kResultsVersion},
                       {"mode", "compare"},
                       {"budget_scale", 1.0},
                       {"shard", {1, 1}},
                       {"scenarios", {doc}}});
  const std::string sched = dir + "/toy.schedule.json";
  std::ofstream(sched) << schedule_doc().dump();
  for (const std::string m : {"none", "global_lock", "disable_check"})
    for (int threads : {2, 4})
      for (const std::string st : {"random", "pct:2"}) {
        for (int64_t t = 0; t < 10; ++t) {
          std::string outcome = "holds";
          if (m == "none" && t == 1) outcome = "error";
          if (m == "disable_check" && t == 3) outcome = "silent_fallback";
          d.cell_seeds.push_back(1);
          d.trials.push_back(record(m, st, threads, t, outcome, outcome == "holds" ? "" : sched,
                                    outcome == "holds" ? 0 : (threads == 2 && st == "random" ? 2 : 4)));
        }
        d.cells.push_back({{"scenario", "toy_leak"}, {"mitigation", m},  {"threads", threads}, {"strategy", st},
                           {"seed", 1},              {"trials", 10},     {"failures", 0},      {"exhausted", false},
                           {"pct_floor", st == "pct:2" ? 0.05 : 0.0},   {"wall_s", 0.25},     {"interrupted", false}});
      }
  d.ends.push_back({{"interrupted", false}, {"wall_s", 3.0}});
  return d;
}

}  // namespace racelab::reports::testing

#endif  // RACELAB_TESTS_REPORTS_FIXTURES_H_
