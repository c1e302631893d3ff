// reports/cell_contract.h -- TEMPORARY copy of the engine's cell contract.
//
// Used only while harness/engine/cell.h does not exist (see trial_record.h).
// Declarations are identical to the engine's; run_cell() is deliberately not
// defined here -- campaigns take the runner as a parameter.
#ifndef RACELAB_REPORTS_CELL_CONTRACT_H_
#define RACELAB_REPORTS_CELL_CONTRACT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace racelab {

struct TrialRecord {
  std::string scenario, workload, mitigation, strategy, outcome, detail;
  nlohmann::json knobs;
  int threads;
  uint64_t seed;
  int64_t trial;
  int64_t steps, preemptions;
  double wall_ms;
  std::string compact;
  std::string schedule_file;
  nlohmann::json metrics;
  nlohmann::json to_json() const;
  static TrialRecord from_json(const nlohmann::json&);
};

struct CellSpec {
  std::string scenario, workload, mitigation, strategy;
  nlohmann::json knobs;
  int threads = 2;
  uint64_t seed = 1;
  int64_t max_trials = 100;
  double max_seconds = 0;
  bool stop_at_first_failure = false;
  bool supervised = true;
  double trial_timeout_s = 30;
  std::string schedule_dir;
};

struct CellSummary {
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  int64_t first_failure_trial = -1;
  std::string first_failure_schedule;
  bool exhausted = false;
  double pct_floor = 0;
  double wall_s = 0;
};

CellSummary run_cell(const CellSpec& spec, const std::function<void(const TrialRecord&)>& sink);

}  // namespace racelab

#endif  // RACELAB_REPORTS_CELL_CONTRACT_H_
