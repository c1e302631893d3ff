// engine/trial.h -- one trial: what to run (TrialSpec) and what happened
// (TrialResult), both JSON-serialisable because they cross the pipe between the
// supervisor and its worker process.
#ifndef RACELAB_ENGINE_TRIAL_H_
#define RACELAB_ENGINE_TRIAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/outcome.h"

namespace racelab {

// What one trial runs. `strategy` is the per-trial strategy spec the worker
// executes without any cross-trial state (see engine/strategy.h): cross-trial
// learning (PCT's step estimate, DFS's search stack) lives in the parent's
// StrategyDriver, so a crashed worker loses nothing.
struct TrialSpec {
  std::string scenario;
  std::string workload;
  std::string mitigation;
  nlohmann::json knobs = nlohmann::json::object();
  int threads = 2;
  uint64_t seed = 1;       // the trial's seed: the workload's data and the strategy's coin flips
  int64_t trial = 0;       // index within its cell
  std::string strategy_name;  // as the user wrote it: "pct:2", "dfs:1", ...
  nlohmann::json strategy = nlohmann::json::object();  // per-trial spec: {"kind":"random"}, ...
  double watchdog_s = 10;     // no progress for this long -> hang
  int64_t max_steps = 200000; // more scheduling steps -> hang (livelock)
  bool record_events = true;

  nlohmann::json to_json() const;
  static TrialSpec from_json(const nlohmann::json& j);
};

// Managed thread ids run from 0 (the trial body) to kMaxThreadId in every
// schedule, replay and minimisation: an exec program may start up to 1,024
// threads besides main, and one that starts more is refused (exit 3).
inline constexpr int kMaxThreadId = 1024;

// One scheduling step: who was chosen, and where it resumes.
struct Decision {
  int64_t step = 0;
  int thread = 0;        // the chosen thread (managed id; 0 runs the workload body)
  std::string point;     // the point the chosen thread was paused at and now passes
  bool preemption = false;  // the requester could have continued but another was chosen
  int requester = -1;    // the thread that asked for the choice
  bool requester_runnable = false;
  std::vector<int> runnable;  // the candidates, ascending
  // What the chosen thread's step touches (engine/strategy.h Footprint):
  // object -1 = no object named (dependent on everything).
  int object = -1;
  bool write = true;
  // What the step did besides its point's object, learned while it ran: the
  // objects it wrote by releasing them (a mutex unlocked, a condition variable
  // notified: that enables the threads blocked on it), and -1 when it joined an
  // ended thread (ordered after everything that thread did). The reduction
  // (engine/strategies/dpor.cpp) counts these as writes; schedules do not record them.
  std::vector<int> touched;
  // The requester was let go after an uncontrolled wait (Scheduler::let_go):
  // this step happened because of time, not of the program.
  bool let_go = false;
};

// A decision as the scheduler hands it to its hook (Scheduler::Options::
// on_decision) while it makes it: borrowed, valid during the call only, and
// without `touched` (learned later, while the step runs). A view, not a
// Decision, so a kept step copies no string and allocates nothing.
struct DecisionView {
  int64_t step = 0;
  int thread = 0;
  const char* point = nullptr;  // nullptr: none
  bool preemption = false;
  int requester = -1;
  bool requester_runnable = false;
  const int* runnable = nullptr;  // runnable_size candidates, ascending
  size_t runnable_size = 0;
  int object = -1;
  bool write = true;
  bool let_go = false;
};

struct Event {
  int64_t step = 0;
  int thread = 0;
  std::string kind;  // point | block | acquire | release | start | end | join
  std::string what;
};

struct TrialResult {
  Outcome outcome = Outcome::kHolds;
  std::string detail;
  int64_t failing_step = -1;  // deadlock/divergence step; else the last step for a failure
  std::vector<Decision> decisions;
  std::vector<Event> events;
  int64_t steps = 0;
  int64_t preemptions = 0;
  int managed_threads = 0;     // threads the scheduler saw, including thread 0
  int64_t uncontrolled = 0;    // instrumented calls from unmanaged threads (nondeterminism)
  double wall_ms = 0;
  nlohmann::json metrics = nlohmann::json::object();
  // Set by the engine when the process can no longer run trials (a thread is
  // stuck in the OS after a watchdog hang): the worker must be replaced.
  bool process_tainted = false;

  nlohmann::json to_json() const;
  // to_json with the decisions and events packed (the worker's result line,
  // engine/supervisor.h): one string of integers each, and their strings once
  // in a table, instead of an object per step: for 150 steps, building, printing,
  // parsing and freeing those objects took 3 ms, half as much as the trial did.
  // from_json reads both forms, into the same TrialResult.
  nlohmann::json to_wire_json() const;
  static TrialResult from_json(const nlohmann::json& j);
};

nlohmann::json decision_to_json(const Decision& d);
nlohmann::json event_to_json(const Event& e);

}  // namespace racelab

#endif  // RACELAB_ENGINE_TRIAL_H_
