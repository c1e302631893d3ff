// engine/zygote.h -- a fork server for supervised workers.
//
// Starting a worker (`<exe> __worker`) loads the whole binary: for the LibTorch
// part about 290 shared libraries, a second or more per process, several on a
// loaded machine. A workload that needs many worker processes at once (the
// trainer's isolate_process: one per drafter) would pay that per process. The
// zygote pays it never or once: a process forked from the trial worker at the
// worker's start (prefork), or else started as `<exe> __zygote`, that runs
// nothing else -- in particular no autograd: LibTorch refuses autograd in a
// child forked after its parent ran a backward pass -- and forks a worker on
// request. A forked worker runs worker_main() as a spawned one
// does, with the same descriptors (engine/worker_channel.h).
//
//   pid_t pid = Zygote::shared().fork_worker(fds, "racelab: worker", &why);
//   if (pid < 0) ... spawn instead, and say why (the fallback)
//
// The worker is a child of the caller, not of the zygote: the zygote forks
// twice and the caller is a child subreaper (PR_SET_CHILD_SUBREAPER, while the
// request is served), so the
// worker is reparented to it and the caller's waitpid() sees its exit, as for
// a spawned worker (engine/supervisor.h). It runs in a process group of its
// own and dies with the caller (worker_main's parent-death check). The zygote
// ends when the caller's end of its socket closes, i.e. with the caller.
//
// Not under ThreadSanitizer (a forked TSan runtime is not supported there):
// fork_worker then fails and the caller spawns.
#ifndef RACELAB_ENGINE_ZYGOTE_H_
#define RACELAB_ENGINE_ZYGOTE_H_

#include <sys/types.h>

#include <mutex>
#include <string>

namespace racelab {

// The descriptors a forked worker gets (stdin is /dev/null).
struct WorkerFds {
  int output;  // -> its stdout and stderr
  int spec;    // -> its kSpecFd
  int result;  // -> its kResultFd
  int trace;   // -> its kTraceFd
};

class Zygote {
 public:
  // This process's zygote, started on the first fork_worker.
  static Zygote& shared();

  // What the workers a zygote forks are: the workers of a trial (the
  // trainer's ranks), which need no zygote of their own, or trial workers
  // (a campaign shard's), each of which preforks one at its start.
  enum class Serves { kTrialsOwnWorkers, kTrialWorkers };

  // Forks this process's zygote now, without loading the binary again: a
  // trial worker does so at its start (worker_main), before any trial, so
  // before any autograd; a campaign shard, for its trial workers, before its
  // first trial (Supervisor's fork_default_workers_from_zygote). Call it
  // while this process runs one thread. Where none was forked so (a process
  // that is not a worker), fork_worker starts one as `<exe> __zygote`. Not in
  // a worker of a trial, nor under ThreadSanitizer.
  void prefork(Serves serves = Serves::kTrialsOwnWorkers);

  // A worker forked from the zygote: its pid (a child of this process), or -1
  // with *why saying what failed (the zygote could not start, died, ...).
  // Thread-safe. The caller keeps its descriptors and closes them as after a
  // spawn.
  pid_t fork_worker(const WorkerFds& fds, const std::string& name, std::string* why);

 private:
  Zygote() = default;
  bool start(std::string* why);
  void forget_if_inherited();

  std::mutex mu_;
  int socket_ = -1;
  pid_t pid_ = -1;
  pid_t owner_ = -1;  // the process that started the zygote
};

// The zygote's main loop (the `__zygote` command, and a preforked zygote):
// its socket is fd 3.
// Returns an exit code: kExitUsage when started by hand, else 0 once the
// caller is gone.
int zygote_main();

}  // namespace racelab

#endif  // RACELAB_ENGINE_ZYGOTE_H_
