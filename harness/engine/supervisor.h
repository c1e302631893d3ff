// engine/supervisor.h -- supervised trials: a worker process (this same binary,
// re-executed as `<exe> __worker`, engine/worker.h) runs trial after trial; the
// parent (Supervisor) sends specs and reads results, so a crash or a hang costs
// one trial, not the campaign.
//
// Channels (the worker's file descriptors):
//   3  <- trial specs, one JSON line each
//   4  -> trial results, one JSON line each (the worker's decisions and
//      events packed: TrialResult::to_wire_json; a Python worker's, objects); a result with
//      "decisions_in_trace": true carries no decisions, and the parent reads
//      them from the trace (the exec worker's, whose trial process mirrors
//      every decision there anyway: a copy through JSON would only cost time)
//   5  a shared memory trace: the worker mirrors every scheduling decision into
//      it as it is made, so after a crash or a kill the parent still has the
//      failing trial's schedule
//   1,2 -> one pipe the parent reads: workload output is passed through, and
//      ThreadSanitizer reports between the worker's "@@racelab-trial-begin N" /
//      "@@racelab-trial-end N" markers become `data_race` for trial N.
//
// The worker is kept alive across trials and across run_cell calls (LibTorch
// start-up costs about a second). A worker whose trial hung (its own watchdog
// gave up on a thread stuck in the OS) exits after reporting; one that stops
// answering within the timeout is killed. Either way the next trial starts a
// fresh worker.
//
// A worker never outlives its supervisor: it asks for SIGKILL when the thread
// that started it exits (PR_SET_PDEATHSIG; so start and run a Supervisor from
// a thread that lives as long as it), and it runs in a process group of its
// own, so a Ctrl-C at the terminal reaches racelab, not the trial in flight.
#ifndef RACELAB_ENGINE_SUPERVISOR_H_
#define RACELAB_ENGINE_SUPERVISOR_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/trial.h"

namespace racelab {

struct SharedTrace;  // the shared memory decision trace (worker_channel.h)

struct SupervisorOptions {
  // The worker command; empty: {"/proc/self/exe", "__worker"}.
  std::vector<std::string> worker_argv;
  // The worker's argv[0], what `ps` shows, when not worker_argv[0] (which is
  // still the file run). Empty with the default command: "racelab: worker",
  // not "/proc/self/exe" (cli/main.cpp names the process after it).
  std::string worker_name;
  // Pass the worker's non-TSan output through to our stderr.
  bool pass_through_output = true;
  // A trial whose worker is killed or stopped from outside (not by the code
  // under test) runs again, the same spec in a fresh worker, this many times;
  // then it is `infrastructure`.
  int external_kill_retries = 2;
  // Fork the worker from this process's zygote (engine/zygote.h) instead of
  // spawning it: one binary load for many workers. The default command only;
  // where the zygote cannot fork, the worker is spawned (started_by() says
  // which, and why).
  bool fork_from_zygote = false;
};

class Supervisor {
 public:
  explicit Supervisor(SupervisorOptions options = {});
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs one trial in the worker, starting or replacing the worker as needed.
  // Crash, hang and data_race are classified here. A worker killed from outside
  // (engine/supervisor.cpp, killed_from_outside: SIGKILL as the OOM killer
  // sends, a signal from another process, a stop) is not a crash of the code
  // under test: the trial is retried with the same seed, the retries recorded
  // in metrics "retries" and "external_kills"; past the bound it is
  // `infrastructure`. Throws std::runtime_error only when no worker can be started.
  TrialResult run(const TrialSpec& spec, double timeout_s);

  // Starts a worker now if none runs, so that the next run() does not pay
  // the start: true when it started one. Throws std::runtime_error as run()
  // does when none can be started. (A worker that died since its last trial
  // is found, and replaced, only by the next run().)
  bool ensure_started();
  int workers_started() const { return workers_started_; }
  // How the current (or last) worker was started: "zygote fork", or "spawn"
  // (with fork_from_zygote: "spawn (<why the zygote could not fork>)").
  const std::string& started_by() const { return started_by_; }
  pid_t worker_pid() const { return pid_; }
  void stop();  // ends the worker (closes its input; kills it if it lingers)

 private:
  void start();
  // One attempt; sets *external to why when the worker was killed from outside.
  TrialResult run_once(const TrialSpec& spec, double timeout_s, std::string* external);
  void reap(int* status, bool kill_first);
  TrialResult recover(const TrialSpec& spec, Outcome outcome, const std::string& detail);
  // The worker died before it began any trial (an interpreter that is not
  // there, a host library it cannot load, a package it cannot import): no
  // trial ran, so nothing of the program failed. Bad input (metrics
  // "bad_input"), in the worker's own words: `status` from waitpid, `words`
  // its last lines of output.
  TrialResult could_not_start(const TrialSpec& spec, int status, const std::string& words);
  // The rest of a dead worker's output (at most `ms` milliseconds), its last lines joined.
  std::string last_words_of_output(int ms);

  SupervisorOptions options_;
  pid_t pid_ = -1;
  int spec_fd_ = -1, result_fd_ = -1, output_fd_ = -1, trace_fd_ = -1;
  SharedTrace* trace_ = nullptr;
  std::string result_buf_, output_buf_;
  int workers_started_ = 0;
  bool began_a_trial_ = false;  // the current worker has begun a trial (its start-up is over)
  std::string started_by_;
};

// The process-wide supervisor run_cell uses (one worker, kept warm).
Supervisor& default_supervisor();

// From now on default_supervisor() forks its workers -- the first, and the
// fresh one after a crash, a hang or a trial that left its process unfit --
// from a zygote forked from this process now (engine/zygote.h): a worker
// starts in milliseconds instead of loading the binary (LibTorch: a second or
// more). Call it before the first trial, while this process runs one thread
// and has run no autograd, as a campaign shard does; where the zygote cannot
// fork, the worker is spawned as before.
void fork_default_workers_from_zygote();

}  // namespace racelab

#endif  // RACELAB_ENGINE_SUPERVISOR_H_
