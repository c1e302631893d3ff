// engine/schedule.h -- schedule files and their one-line compact form.
//
// File (JSON, written atomically):
//   {"format":"racelab-schedule","version":1,"racelab_version":"0.1.0",
//    "scenario":"...","workload":"...","knobs":{...},"mitigation":"...","threads":N,
//    "strategy":"pct:2","seed":S,
//    "decisions":[{"step":0,"thread":1,"point":"capture.flag_set","preemption":true,
//                  "object":0,"access":"write"},...],  <- object, access: only when the point named
//                                                         an object (racelab/point.h), numbered per trial
//                 (a decision made because a thread was let go after an
//                  uncontrolled wait also has "let_go":true; engine/scheduler.h)
//    "events":[{"step":3,"thread":1,"kind":"point|block|acquire|release|start|end|join","what":"..."},...],
//    "outcome":{"class":"stuck_state","detail":"...","failing_step":17},
//    "preemptions":3, "minimized_from_preemptions":5}     <- only when minimised
//
// `seed` is the trial seed (the workload's own randomness); `decisions` are
// every scheduling step, so a replay needs nothing else. Reading is strict:
// a key not shown above (at any level), a key given twice (engine/unique_keys.h),
// `threads` outside 1..64, a thread id outside 0..kMaxThreadId (never narrowed
// to an int first), a step out of order, or a folder for a file is a ScheduleError. Version 1 is unchanged by that: its writers only ever wrote
// these keys, so every file racelab wrote still reads.
//
// Compact form, for logs: "racelab1:" + base64url(JSON array
//   [1, workload, mitigation, threads, seed, outcome class, knobs, scenario, decisions])
// where decisions is run-length text of thread ids, "0*3.1.0*2" = 0,0,0,1,0,0.
// A compact replay checks thread ids only (no point names).
#ifndef RACELAB_ENGINE_SCHEDULE_H_
#define RACELAB_ENGINE_SCHEDULE_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/outcome.h"
#include "engine/trial.h"

namespace racelab {

constexpr int kScheduleVersion = 1;
constexpr const char* kCompactPrefix = "racelab1:";

// Bad schedule input; what() names the source, the field and what was expected.
class ScheduleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Schedule {
  std::string racelab_version;
  std::string scenario, workload, mitigation, strategy;
  nlohmann::json knobs = nlohmann::json::object();
  int threads = 2;
  uint64_t seed = 0;
  std::vector<Decision> decisions;
  std::vector<Event> events;
  Outcome outcome = Outcome::kHolds;
  std::string detail;
  int64_t failing_step = -1;
  int64_t preemptions = 0;
  int64_t minimized_from_preemptions = -1;  // -1: not minimised
  bool points_known = true;                 // false when read from the compact form

  nlohmann::json to_json() const;
  // `source` (a path or "compact form") prefixes error messages.
  static Schedule from_json(const nlohmann::json& j, const std::string& source);
  static Schedule from_trial(const TrialSpec& spec, const TrialResult& result);

  // A spec that replays these decisions strictly.
  TrialSpec replay_spec() const;
  // Counts preemptions from the decisions (the stored field is informational).
  int64_t count_preemptions() const;
};

void save_schedule(const Schedule& s, const std::string& path);  // atomic: tmp, fsync, rename
Schedule load_schedule(const std::string& path);
// The text of a schedule file, read as load_schedule() reads it; `source` prefixes error messages.
Schedule parse_schedule(const std::string& text, const std::string& source);
std::string to_compact(const Schedule& s);
Schedule from_compact(const std::string& text);
// A path, or a string starting with kCompactPrefix.
Schedule load_schedule_arg(const std::string& file_or_compact);

}  // namespace racelab

#endif  // RACELAB_ENGINE_SCHEDULE_H_
