// compile/micro_workloads.h -- the compile-layer races as small,
// repeatable trial bodies. The harness glue (scenarios/register/
// compile_workloads.cpp) registers each as a racelab::Workload; the tests run
// them under a latch controller. A body runs on the calling (managed) thread,
// starts its workers as racelab::Threads, joins them, and reports what the
// oracles saw.
//
//   direct_leak              worker i compiles its own shape, then hits the
//                            cache; a cache hit while another worker captures raises
//   stuck_true               worker 1 compiles; worker 2 runs the eager path
//                            (writes the flag before the lock): lost restore; with
//                            knob grad, its fw/bw trace runs outside the lock.
//                            Knob roles "eager": every worker on the eager path, as
//                            the real-torch twin (torch_stuck_true) runs
//   transient_false          worker 1 user-traces a function that calls a compiled
//                            function (a genuine nested capture that must raise);
//                            worker 2's eager path clears the flag meanwhile
//   module_patch             worker 1 compiles (patch installed); worker 2 makes
//                            module calls and its own user trace. Knob roles
//                            "trace_and_eager": worker 1 user-traces, the others
//                            make eager module calls, as torch_module_patch runs
//   recompile_after_warmup   all warm, then worker 1 meets a new shape
//   user_trace_outside_lock  worker 1 user-traces (no compile lock); the others compile
//                            (their first call) and hit the cache
//   unsync_cache             cache variant "unsynchronised": concurrent first
//                            compiles publish the cache table without a lock
//   jit_setting_restore      real LibTorch: a process-global JIT setting flipped
//                            with save/restore around a compile in every worker
//   te_fuser_crash           real LibTorch: one shared TE-fused scripted function
//                            called concurrently (heap corruption; free running only)
#ifndef RACELAB_COMPILE_MICRO_WORKLOADS_H_
#define RACELAB_COMPILE_MICRO_WORKLOADS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compile/capture_state.h"

namespace racelab::compile {

struct MicroConfig {
  std::string workload;
  std::string mitigation = "none";
  int threads = 2;
  int iterations = 3;
  int64_t seq = 8;     // base sequence length; worker i uses seq + i where shapes differ
  int64_t dim = 8;     // head dimension
  int64_t heads = 2;
  bool grad = false;   // inputs require grad
  bool freeze = true;  // precompile: a new shape after warm-up raises
  int recompile_limit = 8;
  std::string setting = "profiling_mode";  // jit_setting_restore
  bool shared = true;                      // te_fuser_crash: one shared function vs private copies
  // Who does what: "mixed" (the defaults above), "eager" (stuck_true: every
  // worker on the eager path), "trace_and_eager" (module_patch: worker 1
  // user-traces, the others call modules eagerly). The real-torch twins run
  // the latter two: under precompile their threads still run unlocked traces
  // at once, where the mixed roles' warmed compiled calls trace nothing.
  std::string roles = "mixed";
  Variants variants;
  uint64_t seed = 0;
};

struct MicroResult {
  std::vector<std::string> errors;
  std::string stuck_state;
  std::string wrong_result;
  int64_t silent_fallbacks = 0;
  std::map<std::string, double> metrics;
};

const std::vector<std::string>& micro_workload_names();
std::string micro_workload_description(const std::string& workload);
// The mitigations a workload accepts (every one unless a mitigation cannot be
// honestly modelled for it inside one process).
std::vector<std::string> micro_workload_mitigations(const std::string& workload);
// Per-workload default knobs that differ from MicroConfig's (e.g. unsync_cache
// sets cache=unsynchronised, te_fuser_crash uses 8 threads).
MicroConfig micro_defaults(const std::string& workload);
// The roles `workload` accepts (knob roles): "mixed", and its twin's, if any.
std::vector<std::string> micro_workload_roles(const std::string& workload);
bool micro_needs_free_running(const std::string& workload);

// Runs one trial. Throws std::invalid_argument for an unknown workload or
// mitigation. Call reset_for_trial() (oracles.h) before it.
MicroResult run_micro(const MicroConfig& config);

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_MICRO_WORKLOADS_H_
