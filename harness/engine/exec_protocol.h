// engine/exec_protocol.h -- what the exec host's two halves agree on: the
// worker (`racelab __exec-worker`, engine/exec_host.h) and the preload shim
// inside the program under test (harness/preload/).
//
// The worker starts the program with LD_PRELOAD=libracelab_preload.so and
// kExecEnv set. The shim takes over at the start of main and says "hello" on
// kExecCtlOut. Then, per trial, the worker writes one TrialSpec JSON line on
// kExecCtlIn:
//  - fork server (kExecEnv "fork"): the shim hands the line to a trial process
//    it forked one trial ahead (a spare, already waiting); that process runs
//    main under the engine's Scheduler; the shim puts its pid in the report
//    page (ExecReport::pid, for the worker to kill a trial that never ends)
//    and, once it is gone, answers "status S" (a waitpid status), or
//    "error ..." when it could not fork or the spare was gone. One line per
//    trial, not two: every line wakes the worker, and a trial is a few such
//    wake-ups long. The image
//    stopped at main is forked again for every trial, so a trial costs a
//    fork, not an exec.
//  - exec per trial (kExecEnv "single"): the program runs that one trial
//    itself; the worker waits for it.
// The trial process mirrors every decision into the shared trace (kExecTraceFd,
// engine/worker_channel.h), so a crash loses none, and writes what only it
// knows (a deadlock and its cycle, a watchdog hang, a divergence, its events)
// into the shared report page (kExecReportFd) before it ends.
#ifndef RACELAB_ENGINE_EXEC_PROTOCOL_H_
#define RACELAB_ENGINE_EXEC_PROTOCOL_H_

#include <atomic>
#include <cstdint>

namespace racelab {

// The program's descriptors (high, out of the way of what it opens itself).
inline constexpr int kExecCtlIn = 200;     // <- trial specs, one JSON line each
inline constexpr int kExecCtlOut = 201;    // -> "hello", then "status S" per trial
inline constexpr int kExecTraceFd = 202;   // the shared decision trace
inline constexpr int kExecReportFd = 203;  // the shared report below

// "fork" or "single"; set only for the program the worker starts.
inline constexpr const char* kExecEnv = "RACELAB_EXEC";
// LD_PRELOAD as it was before the worker added the shim: the trial gets it
// back, so programs the program runs do not load the shim.
inline constexpr const char* kExecPreloadWasEnv = "RACELAB_EXEC_PRELOAD_WAS";

inline constexpr uint32_t kExecReportMax = 4u << 20;

// In an exec trial a thread that has waited this many steps as a candidate
// runs next (Scheduler::Options::fair_steps): the program's liveness, as the
// OS would give it, whatever the strategy ranks.
inline constexpr int64_t kExecFairSteps = 1000;

// JSON, written once per trial by the trial process:
//   {"aborted":true,"outcome":"hang","detail":"...","failing_step":N,
//    "steps":N,"preemptions":N,"threads":N,"events":[...]}
// "aborted" is false when main returned (or exit() ran): the exit status then
// decides. size 0: the process died before it could write (a crash).
// pid: the fork server's trial process (0 until it is forked).
struct ExecReport {
  std::atomic<uint32_t> size;
  std::atomic<int32_t> pid;
  char json[kExecReportMax];
};

}  // namespace racelab

#endif  // RACELAB_ENGINE_EXEC_PROTOCOL_H_
