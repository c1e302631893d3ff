// engine/cell.h -- the public engine API: run the trials of one cell
// (scenario x workload x mitigation x threads x strategy) and stream a record
// per trial. Campaigns and reports build on this; keep it stable. The one
// engine header the package installs, as <racelab/cell.h>: what a program that
// embeds the engine (racelab::engine) includes, so it includes nothing else.
//
// "failure" = any outcome other than `holds`. For each failing trial the record
// carries the one-line compact schedule; the full schedule file is written (to
// spec.schedule_dir, when set) for the first failure of each outcome class.
#ifndef RACELAB_ENGINE_CELL_H_
#define RACELAB_ENGINE_CELL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace racelab {

struct TrialRecord {
  std::string scenario, workload, mitigation, strategy, outcome, detail;
  nlohmann::json knobs;
  int threads = 0;
  uint64_t seed = 0;   // the trial's seed (replays need it; the compact form has it)
  int64_t trial = 0;
  int64_t steps = 0, preemptions = 0;
  double wall_ms = 0;
  std::string compact;        // failing trials: racelab1:... (replay from a log line)
  std::string schedule_file;  // set when this trial's schedule was written
  nlohmann::json metrics;     // the workload's metrics plus engine notes (tsan_reports, ...)
  nlohmann::json to_json() const;
  static TrialRecord from_json(const nlohmann::json& j);
};

// Which of a cell's trials a run makes: all of them (count 1), or part
// `index` of `count`, the blocks of trials dealt to it (engine/trial_plan.h).
// A trial depends on its index alone, so the parts, run on different
// machines or cores, are together the whole cell, trial for trial.
struct CellPart {
  int index = 0;        // 0-based
  int count = 1;
  uint64_t offset = 0;  // the cell's place in its campaign: where the dealing starts
};

struct CellSpec {
  std::string scenario, workload, mitigation, strategy;
  nlohmann::json knobs;
  int threads = 2;
  uint64_t seed = 1;
  int64_t max_trials = 100;
  double max_seconds = 0;  // 0 = none
  // Trials that max_seconds cannot cut: what an expectation needs of this cell.
  // A time cap is there to bound a slow cell, not to fail a check on a loaded machine.
  int64_t min_trials = 0;
  bool stop_at_first_failure = false;
  // With stop_at_first_failure: the cell stops at its first failure, or, when
  // that comes earlier, once it has run this many trials -- a cell that is
  // decided still needs enough trials for the failure rate the report shows.
  int64_t rate_trials = 0;
  bool supervised = true;
  double trial_timeout_s = 30;  // -> hang: the worker's watchdog at half of it (no progress), the parent's kill at it
  std::string schedule_dir;  // where failing schedules go ("" = not written)
  // Strategy replay:FILE: a schedule made for another program, or naming
  // none, is replayed anyway (engine/schedule_fit.h) and `warn` is told so
  // before the first trial.
  bool any_program = false;
  std::function<void(const std::string&)> warn;
  CellPart part;  // the whole cell unless a shard was dealt a part of it
};

struct CellSummary {
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  int64_t first_failure_trial = -1;
  std::string first_failure_schedule;
  bool exhausted = false;  // dfs, dpor: every schedule (class) within the bound was tried (complete)
  int64_t classes = -1;    // dpor: the classes of equivalent schedules it explored; -1: not counted
  double pct_floor = 0;    // pct: 1/(n*k^(d-1)) for the n and k learned
  int pct_depth = 0;       // ... and its d, k and n (auto: its pct arm's); 0: no PCT
  int64_t pct_k = 0;
  int pct_n = 0;
  std::string note;        // the driver's remark (dfs: complete or not; auto: failures/trials per arm)
  double wall_s = 0;
};

// Runs trials of one cell, calling sink(record) as each finishes (the caller
// appends to JSONL). Throws std::invalid_argument (unknown workload, knob,
// mitigation, strategy) or ScheduleError (bad replay schedule, or one made for
// another workload or program: engine/schedule_fit.h) before any trial,
// and ExecError (engine/exec_host.h) when a trial cannot run here: an exec
// program that never reached main, a CUDA workload without a device.
CellSummary run_cell(const CellSpec& spec, const std::function<void(const TrialRecord&)>& sink);

}  // namespace racelab

#endif  // RACELAB_ENGINE_CELL_H_
