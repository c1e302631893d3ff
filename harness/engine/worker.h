// engine/worker.h -- the trial worker: the process the supervisor starts as
// `<this binary> __worker` with its channels on fds 3-5 (engine/supervisor.h).
#ifndef RACELAB_ENGINE_WORKER_H_
#define RACELAB_ENGINE_WORKER_H_

namespace racelab {

// The worker's main loop (the `__worker` command). Returns an exit code:
// kExitUsage when started by hand (no channels), else 0 once the parent is gone.
int worker_main();

}  // namespace racelab

#endif  // RACELAB_ENGINE_WORKER_H_
