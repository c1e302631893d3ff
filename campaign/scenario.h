// campaign/scenario.h -- a scenario file: what to run and what must come out.
//
// The schema is documented in scenarios/SCHEMA.md. In short:
//
//   {"format": "racelab-scenario", "version": 1, "name": "direct_leak",
//    "race": "direct leak", "description": "...", "workload": "direct_leak",
//    "knobs": {...}, "threads": [2, 3, 4, 8], "seeds": [1],
//    "strategies": [{"strategy": "random", "trials": 40, "seconds": 20}, ...],
//    "mitigations": ["none", "global_lock", ...],
//    "expectations": {"none": {"reproduces_within": 50, "outcome": "error"},
//                     "global_lock": {"holds_over": 500}, ...},
//    "expectations_by_libtorch": {"2.6": {"none": {"holds_over": 100}}},
//    "expectations_by_torch": {"2.14": {"none": {"holds_over": 20}}},
//    "knobs_by_torch": {"2.14": {"flag_scope": "thread_local"}}}
//
// Whether a race of LibTorch's own process-global state happens is a property of the
// LibTorch version, so a scenario may replace some mitigations' expectations for one
// "major.minor"; racelab picks the set for the LibTorch it was built against. The same
// holds for the Python torch a real-torch scenario runs on (expectations_by_torch),
// and a model scenario follows that torch's design with its knobs (knobs_by_torch:
// e.g. 2.14's thread-local FX flag); racelab picks both by the torch of the campaign
// (the --python's, or --torch).
//
// validate_scenario() reports every problem at once, each with its JSON path; a
// Scenario is only built from a document that validated clean.
#ifndef RACELAB_CAMPAIGN_SCENARIO_H_
#define RACELAB_CAMPAIGN_SCENARIO_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab::campaign {

inline constexpr const char* kScenarioFormat = "racelab-scenario";
inline constexpr int kScenarioVersion = 1;

// One strategy of the sweep with its per-cell budget. A cell stops at whichever
// budget runs out first; `threads` (optional) overrides the scenario's sweep,
// e.g. to keep dfs to small thread counts.
struct StrategyBudget {
  std::string strategy;
  int64_t trials = 0;
  double seconds = 0;        // 0: no time cap
  std::vector<int> threads;  // empty: the scenario's threads
};

// What must hold for one mitigation. Every present clause must pass:
//  - reproduces_within N: each matched cell fails by its N-th trial;
//  - holds_over N:        zero failures over at least N trials (matched cells together);
//  - outcome C:           at least one failure, of class C;
//  - allowed [C..]:       failure classes tolerated besides `outcome` (with neither,
//                         any class counts);
//  - max_rate x:          failure rate over matched cells at most x (e.g. "rare");
//  - holds {"exhaustive_preemptions": P}: no failure, and at every thread count
//                         its dfs:Q or dpor:Q strategy (Q >= P) runs at, such a cell tried every
//                         schedule (dpor: class of schedules) with up to Q preemptions (complete).
//                         Those cells always run at full budget: a scaled-down search proves nothing.
// `strategies` / `threads` restrict the matched cells; `why` is shown in reports.
struct Expectation {
  std::string mitigation;
  int64_t reproduces_within = -1;
  int64_t holds_over = -1;
  std::string outcome;
  std::vector<std::string> allowed;
  double max_rate = -1;
  int exhaustive_preemptions = -1;  // holds.exhaustive_preemptions; -1: not demanded
  std::vector<std::string> strategies;
  std::vector<int> threads;
  std::string why;
  nlohmann::json source;  // the object as written, for reports

  bool matches(const std::string& strategy, int threads) const;
  std::string describe() const;  // "reproduces_within 50, outcome error"
};

// The throughput comparison: `metric` from trial metrics, in cells of
// `strategy` (free-running, so the number means something), relative to the
// `ideal` mitigation (the race-free root fix).
struct CostSpec {
  std::string metric = "steps_per_s";
  std::string ideal = "isolate_thread";
  std::string strategy = "os";
};

struct Scenario {
  std::string file;
  std::string name, race, description, workload;
  nlohmann::json knobs = nlohmann::json::object();
  std::vector<int> threads;
  std::vector<uint64_t> seeds;
  std::vector<StrategyBudget> strategies;
  std::vector<std::string> mitigations;
  std::vector<Expectation> expectations;  // one per mitigation, same order
  std::string libtorch;                   // "2.6" when expectations_by_libtorch["2.6"] was applied
  std::string torch;                      // "2.14" when expectations_by_torch or knobs_by_torch["2.14"] was applied
  CostSpec cost;
  bool supervised = true;
  double trial_timeout_s = 30;
  nlohmann::json exec;    // workload "exec": the program variants (scenario_exec.h); else null
  nlohmann::json pyrun;   // workload "pyrun": the script variants (scenario_exec.h); else null
  nlohmann::json source;  // the whole document as written

  const Expectation* expectation_for(const std::string& mitigation) const;
};

// The largest budgets a scenario may give: a count of trials (trials,
// reproduces_within, holds_over) up to 10^9, a time (seconds,
// trial_timeout_s) up to one week. Beyond them a number is a typo, and one
// as large as 1e308 would overflow what is computed from it.
inline constexpr int64_t kMaxScenarioTrials = 1000000000;
inline constexpr double kMaxScenarioSeconds = 7 * 24 * 3600;
// Names that name files: a schedule file is SCENARIO-VARIANT-STRATEGY-Nt-sSEED-
// trialK-CLASS.json, and a file name has at most 255 bytes (NAME_MAX), so a
// scenario's name and an exec or pyrun variant's name are kept well inside it.
inline constexpr size_t kMaxScenarioNameLength = 64;
inline constexpr size_t kMaxVariantNameLength = 32;

struct Problem {
  std::string file;
  std::string path;  // JSON path, e.g. $.strategies[1].trials
  std::string found;
  std::string expected;
  std::string to_string() const;  // "file: $.path: found X, expected Y"
};

// What the validator may check against the workload registry. Null members
// mean "unknown" (e.g. a library test without workloads linked in).
struct WorkloadInfo {
  nlohmann::json default_knobs;
  std::vector<std::string> mitigations;
  bool needs_free_running = false;
  // The engine's check of a scenario's knobs (merged with the defaults):
  // throws racelab::KnobError (racelab/workload.h) for a value the workload
  // cannot run with, so `validate` rejects what `ci` would. Null: not checked.
  std::function<void(const nlohmann::json& knobs)> check_knobs;
};
using WorkloadLookup = std::function<const WorkloadInfo*(const std::string& name)>;

std::vector<Problem> validate_scenario(const nlohmann::json& doc, const std::string& file,
                                       const WorkloadLookup& lookup = nullptr);

// "2.6" from "2.6.0" or "2.6.0+cu130": the key of expectations_by_libtorch (and of
// expectations_by_torch and knobs_by_torch, from a torch version).
std::string libtorch_key(const std::string& libtorch_version);

// Builds a Scenario from a document validate_scenario() accepted. `libtorch` is the
// LibTorch version the trials run (or ran) on; its expectations_by_libtorch entry, if
// any, replaces the named mitigations' expectations. `torch` is the Python torch's
// version the campaign runs against ("" when none); its knobs_by_torch entry is laid
// over the knobs, and its expectations_by_torch entry replaces expectations (after
// the LibTorch one). Empty: the default set.
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file, const std::string& libtorch = "",
                        const std::string& torch = "");

// Reads FILE or every *.json in a directory (sorted), validating each. Files
// that fail JSON parsing or validation, or say a key of one object twice
// (both places named), add to `problems` and are skipped.
std::vector<Scenario> load_scenarios(const std::vector<std::string>& paths, const WorkloadLookup& lookup,
                                     std::vector<Problem>* problems, const std::string& libtorch = "",
                                     const std::string& torch = "");

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_SCENARIO_H_
