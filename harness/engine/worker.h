// engine/worker.h -- the trial worker: the process the supervisor starts as
// `<this binary> __worker` with its channels on fds 3-5 (engine/supervisor.h).
#ifndef RACELAB_ENGINE_WORKER_H_
#define RACELAB_ENGINE_WORKER_H_

#include <functional>

#include "engine/trial.h"

namespace racelab {

struct SharedTrace;

// The worker's main loop (the `__worker` command). Returns an exit code:
// kExitUsage when started by hand (no channels), else 0 once the parent is gone.
// A trial whose metrics hold kFreshWorkerAfter (true or non-zero) -- its body
// left the process unfit for more trials, e.g. a heap the race corrupted
// without crashing -- is reported as process_tainted and the worker exits, so
// the next trial, whatever its cell, starts in a fresh one.
int worker_main();
inline constexpr const char* kFreshWorkerAfter = "fresh_worker_after";

// The worker side of the channels, for any host that is a worker (this binary's
// `__worker`, a Python worker through racelab/host.h): checks that fds 3-5 are
// open, maps the shared trace, asks to die with the parent and installs the
// last-words handlers. nullptr when not started by a supervisor.
SharedTrace* open_worker_channel();
// A decision hook (TrialHooks::on_decision) that mirrors every decision into
// the shared trace, so the parent keeps the schedule of a trial that crashes.
std::function<void(const DecisionView&)> mirror_decisions(SharedTrace* trace);

}  // namespace racelab

#endif  // RACELAB_ENGINE_WORKER_H_
