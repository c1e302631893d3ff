// reports/cell_stats.h -- what build_report() gathers per cell of the matrix
// from the trial records, shared by the report model and the expectation check.
// Internal to reports/.
#ifndef RACELAB_REPORTS_CELL_STATS_H_
#define RACELAB_REPORTS_CELL_STATS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab::reports {

// (scenario, mitigation, threads, strategy, seed): one cell of the matrix.
using CellKey = std::tuple<std::string, std::string, int, std::string, uint64_t>;

struct CellStats {
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  int64_t first_failure = -1;  // 1-based position among the cell's trials
  std::string first_schedule;
  double metric_sum = 0;
  int64_t metric_n = 0;
  std::vector<double> metric_values;  // every trial's, for the spread
  double wall_ms = 0;
  // Where the trials' time went, where the workload says (compile-layer micro
  // workloads, compile/trial_phases.h): CPU milliseconds by phase ("cpu_ms.X"
  // metrics) and the time inside the workload's body ("wall_seconds"), summed
  // over the trials that report them.
  std::map<std::string, double> cpu_ms;
  int64_t cpu_n = 0;
  double body_ms = 0;
  int64_t body_n = 0;
  // Trials per strategy that ran them (a portfolio's arm, else the cell's strategy).
  std::map<std::string, int64_t> trials_by_strategy;
  int64_t fewest_preemptions = -1;  // among failing trials of controlled strategies
  const nlohmann::json* summary = nullptr;  // the "cell" line, once finished
  // A cell dealt over shards (engine/trial_plan.h): its parts' "cell" lines
  // added up, once every part that has trials is there; `summary` points here.
  std::shared_ptr<nlohmann::json> whole;
};

inline double rate_of(int64_t failures, int64_t trials) {
  return trials > 0 ? double(failures) / double(trials) : 0.0;
}

// [low, high] of the 95% Wilson score interval.
nlohmann::json interval_json(int64_t failures, int64_t trials);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_CELL_STATS_H_
