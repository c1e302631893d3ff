// engine/outcome.h -- the outcome classes of a trial and how they are ranked
// when several apply (docs/ARCHITECTURE.md, "Trials and outcome classes"). The
// one list: the scenario validator and the reports take it from here.
//
// Priority, highest first (the first that applies names the trial):
//
//   infrastructure > crash > hang > divergence > data_race > stuck_state
//         > wrong_result > error > silent_fallback > holds
//
// `infrastructure` is neither a failure nor a pass: the trial could not be run
// to its end for reasons outside the code under test (its worker was killed
// or stopped from outside, again after every retry; engine/supervisor.h).
// Reports count it apart, never as a race and never as holds.
//
// Why this order: a crash or hang ends the trial early, so whatever the oracles
// saw is incomplete; a divergence means the schedule itself was not followed, so
// the oracles judged a different run; a TSan report is evidence about the code
// regardless of the logic outcome; a poisoned process (stuck_state) outlives the
// trial and explains later errors; a silently wrong result is worse than a loud
// error; a silent fallback is the mildest (the run was correct, only slow).
#ifndef RACELAB_ENGINE_OUTCOME_H_
#define RACELAB_ENGINE_OUTCOME_H_

#include <string>
#include <vector>

#include "racelab/workload.h"

namespace racelab {

enum class Outcome {
  kHolds,
  kSilentFallback,
  kError,
  kWrongResult,
  kStuckState,
  kDataRace,
  kDivergence,
  kHang,
  kCrash,
  kInfrastructure,
};

// "holds", "silent_fallback", ... -- the names used in schedules, JSONL and reports.
const char* outcome_name(Outcome o);
// Inverse of outcome_name; false for an unknown name.
bool parse_outcome(const std::string& name, Outcome* out);
// All classes, lowest priority first.
const std::vector<Outcome>& all_outcomes();
// Every class but "holds" and "infrastructure" is a failure. By name too, as
// results files and reports carry outcomes.
inline bool is_failure(Outcome o) { return o != Outcome::kHolds && o != Outcome::kInfrastructure; }
bool is_failure(const std::string& outcome_name);
// False only for "infrastructure": a trial that says nothing about the code
// under test and is not counted, neither as a failure nor as a pass.
inline bool is_conclusive(Outcome o) { return o != Outcome::kInfrastructure; }
bool is_conclusive(const std::string& outcome_name);
// The failure classes' names, for messages: "silent_fallback, error, ... or crash".
std::string failure_class_list();
// Higher value wins when several classes apply.
inline int outcome_rank(Outcome o) { return static_cast<int>(o); }
inline Outcome worst(Outcome a, Outcome b) { return outcome_rank(a) >= outcome_rank(b) ? a : b; }

// The class the workload's own oracles imply, with a one-line detail.
Outcome classify_observation(const Observation& obs, std::string* detail);

}  // namespace racelab

#endif  // RACELAB_ENGINE_OUTCOME_H_
