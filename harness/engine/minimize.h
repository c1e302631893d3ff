// engine/minimize.h -- shrink a failing schedule to the fewest context switches
// that still fail the same way.
//
// A run is described as a set of switches "when thread A makes its k-th
// scheduling request, run B" on top of the non-preemptive default (keep
// running; when blocked or ended, the lowest runnable id). The input's set is
// every decision that differs from that default. ddmin (Zeller) removes
// switches while the outcome class stays the same AND the run has no more
// preemptions than the input; the survivor is re-run to record an exact,
// strictly replayable schedule. So the result never has more preemptions than
// the input.
#ifndef RACELAB_ENGINE_MINIMIZE_H_
#define RACELAB_ENGINE_MINIMIZE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "engine/schedule.h"
#include "engine/trial.h"

namespace racelab {

using TrialRunner = std::function<TrialResult(const TrialSpec&)>;

struct MinimizeResult {
  bool ok = false;          // false: the input did not reproduce (see error)
  std::string error;
  Schedule schedule;        // the minimised schedule (minimized_from_preemptions set)
  int64_t preemptions_before = 0, preemptions_after = 0;
  int64_t switches_before = 0, switches_after = 0;  // non-default decisions
  int64_t trials = 0;       // trials the search ran
};

// Throws ScheduleError before any trial when `input` does not fit its program
// (engine/schedule_fit.h), unless any_program (the caller has warned).
MinimizeResult minimize(const Schedule& input, const TrialRunner& run, int64_t max_trials = 400,
                        bool any_program = false);

}  // namespace racelab

#endif  // RACELAB_ENGINE_MINIMIZE_H_
