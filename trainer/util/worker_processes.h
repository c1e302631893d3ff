// trainer/util/worker_processes.h -- one OS process per worker.
//
// The isolate_process mitigation gives every drafter its own process, so no
// compile state is shared. `racelab train` re-executes itself per rank (it
// forks and execs here: a forked child may not run autograd on LibTorch 2.x
// once the parent has). The `trainer` workload spawns racelab workers instead.
#ifndef TRAINER_UTIL_WORKER_PROCESSES_H_
#define TRAINER_UTIL_WORKER_PROCESSES_H_

#include <functional>
#include <string>
#include <vector>

namespace racelab::trainer {

struct WorkerExit {
  int status = 0;      // as waitpid() reports it (WIFEXITED, WEXITSTATUS, WIFSIGNALED ...)
  std::string output;  // everything the child wrote to its pipe
};

// Forks `workers` children. Child `rank` runs child(rank, out_fd) -- it may
// exec, and out_fd is closed on exec -- and leaves with _exit(its return
// value), so the parent's atexit handlers and stdio buffers do not run twice.
// The parent reads every child's pipe to the end and reaps it; the result has
// one WorkerExit per rank, in rank order. Throws std::runtime_error when a pipe
// or fork fails, after killing and reaping the children already started.
// Prepare everything the child needs (e.g. exec arguments) before calling:
// after fork() in a threaded process only the calling thread exists.
std::vector<WorkerExit> run_worker_processes(int workers, const std::function<int(int rank, int out_fd)>& child);

}  // namespace racelab::trainer

#endif  // TRAINER_UTIL_WORKER_PROCESSES_H_
