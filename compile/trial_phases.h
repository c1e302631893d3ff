// compile/trial_phases.h -- where a compile-layer trial's CPU time goes.
//
// A trial of a micro workload (micro_workloads.h) spends its time in a few
// phases; racelab bench --sections compare shows their split, so that what is
// not the race can be found and cut:
//   inputs     building the trial's inputs and the eager reference results
//   trace      captures: LibTorch's tracer running the function (compiles,
//              the eager path's captures, user traces)
//   build      the compile's graph passes and building its GraphExecutor
//   first_run  an entry's first executor run (LibTorch's simple executor:
//              it plans the graph and runs it)
//   run        its later runs
//   oracle     checking results against eager and the global-state snapshots
// Each is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not the wall
// clock: a loaded machine does not move it. A phase entered inside another
// (a compile inside a user trace) is counted to the inner one only.
//
//   { PhaseScope s(Phase::kTrace); ... }
//   phase_cpu_ms()  -> {"inputs": ..., ...} since the last reset_phases()
#ifndef RACELAB_COMPILE_TRIAL_PHASES_H_
#define RACELAB_COMPILE_TRIAL_PHASES_H_

#include <cstdint>
#include <map>
#include <string>

namespace racelab::compile {

enum class Phase { kInputs, kTrace, kBuild, kFirstRun, kRun, kOracle, kCount };

const char* phase_name(Phase p);

// Counts this thread's CPU time from construction to destruction to `p`,
// pausing the phase it was entered from.
class PhaseScope {
 public:
  explicit PhaseScope(Phase p);
  ~PhaseScope();
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Phase phase_;
  PhaseScope* outer_;
  int64_t start_ns_;
};

// Zero every phase (reset_for_trial does, with no worker thread running).
void reset_phases();
// Every phase's CPU milliseconds since the last reset, by phase_name.
std::map<std::string, double> phase_cpu_ms();

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_TRIAL_PHASES_H_
