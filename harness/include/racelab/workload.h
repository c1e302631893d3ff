// racelab/workload.h -- what the harness knows about a system under test.
//
// The harness sees a scenario's workload as a named body with knobs. It knows
// nothing about drafters or compilers: the glue in scenarios/register/ registers
// each workload, and the engine runs it, under a strategy, as a trial.
//
// A trial body runs on managed thread 0. It starts its own racelab::Threads,
// joins them, and reports what the oracles saw. The engine itself adds the
// outcome classes only it can see: hang, crash, divergence and data_race.
#ifndef RACELAB_WORKLOAD_H_
#define RACELAB_WORKLOAD_H_

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab {

struct TrialInput {
  nlohmann::json knobs;    // workload knobs, already merged with defaults
  std::string mitigation;  // one of the workload's mitigations
  int threads = 2;         // worker threads the body should start
  uint64_t seed = 0;       // for the body's own randomness (data, shapes)
};

// What the system under test's oracles observed during one trial.
struct Observation {
  std::vector<std::string> errors;  // exceptions from any thread, with message
  std::string stuck_state;          // non-empty: global state left wrong after join
  std::string wrong_result;         // non-empty: output or capture differs from reference
  int64_t silent_fallbacks = 0;     // compiled calls that ran the eager path
  nlohmann::json metrics = nlohmann::json::object();  // e.g. steps_per_s, compiles
};

// A knob value a workload cannot run with. It is a configuration error, found
// before any trial runs (`racelab run -k`: exit 2; a scenario file: `validate`
// and `ci` reject it, exit 3), never an outcome of the system under test.
class KnobError : public std::invalid_argument {
 public:
  // knob "" means a combination of knobs; found is the value as written (JSON).
  KnobError(std::string knob, std::string found, std::string expected);
  const std::string& knob() const { return knob_; }
  const std::string& found() const { return found_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string knob_, found_, expected_;
};

// For check_knobs: the integer knob `name` of the merged knobs, in [lo, hi];
// anything else (a fraction, a value out of range) throws KnobError.
int64_t int_knob(const nlohmann::json& knobs, const std::string& name, int64_t lo, int64_t hi);

struct Workload {
  std::string name;
  std::string description;
  nlohmann::json default_knobs = nlohmann::json::object();  // every accepted knob
  std::vector<std::string> mitigations;                     // accepted mitigation names
  bool needs_free_running = false;  // true: real-concurrency race (os strategy only)
  // Brings process-global state back to its initial value (between trials).
  std::function<void()> reset;
  std::function<Observation(const TrialInput&)> run;
  // Throws KnobError for merged knobs the body cannot run with (a value out
  // of range, a word it does not know). The engine calls it before the first
  // trial, the scenario validator for every scenario, so a bad value never
  // reaches `run`. JSON types were already checked against default_knobs.
  std::function<void(const nlohmann::json& knobs)> check_knobs;
  // Who runs the trial body: "" this binary (in-process or its `__worker`);
  // "python" a Python worker over the C ABI (engine/python_host.h), with
  // `run` never called here.
  std::string host;
  // Optional. Readies, before the trial's clock and watchdog start, what a
  // real job has ready before its run starts, so that a trial's wall time is
  // the run's, not racelab's start-up (the trainer's isolate_process: its
  // rank processes, started once and kept, as a job keeps its ranks). Called
  // after `reset`, on the thread that runs the trial; it must not throw: what
  // it could not do, the body meets again and reports, and what it did, the
  // body reports in its metrics (the time it took included), so that nothing
  // it costs is hidden.
  std::function<void(const TrialInput&)> prepare;  // last: workloads are initialised positionally
};

void register_workload(Workload workload);
const Workload* find_workload(const std::string& name);
std::vector<const Workload*> all_workloads();

// A binary that carries only some of the workloads (the lean `racelab`, whose
// LibTorch workloads live in `racelab-torch`, cli/torch_part.h) learns here
// that a command asked for one it does not have: the hook is called with the
// name find_workload() did not find, or with "" when all_workloads() is asked
// for the whole list. It may run the command elsewhere and not return; if it
// returns, the look-up answers as usual. Null (the default): no hook.
using WorkloadMissHook = void (*)(const std::string& name);
void set_workload_miss_hook(WorkloadMissHook hook);

struct WorkloadRegistrar {
  explicit WorkloadRegistrar(Workload workload) { register_workload(std::move(workload)); }
};

}  // namespace racelab

#endif  // RACELAB_WORKLOAD_H_
