// compile/oracles.h -- what the harness checks after a trial: global
// state back to its initial value (capture flag, module-call patch, LibTorch's
// own process-global JIT settings), and reset_for_trial() between trials.
#ifndef RACELAB_COMPILE_ORACLES_H_
#define RACELAB_COMPILE_ORACLES_H_

#include <string>

#include "compile/capture_state.h"

namespace racelab::compile {

// LibTorch 1.13 JIT settings. The first four are process-global (races);
// executor_optimize is thread-local in LibTorch (this thread's value).
struct JitSettings {
  bool profiling_mode = true;     // torch::jit::getProfilingMode()
  bool executor_mode = true;      // torch::jit::getExecutorMode()
  bool texpr_fuser = true;        // torch::jit::tensorExprFuserEnabled()
  bool can_fuse_on_cpu = false;   // torch::jit::canFuseOnCPU()
  bool te_must_use_llvm = true;   // torch::jit::tensorexpr::getTEMustUseLLVMOnCPU()
  bool executor_optimize = true;  // torch::jit::getGraphExecutorOptimize() (thread-local)

  static JitSettings read();
  void apply() const;
  std::string diff(const JitSettings& initial) const;  // "" when equal
};

// The values the process started with (read once, on first use).
const JitSettings& initial_jit_settings();

struct GlobalSnapshot {
  CaptureSnapshot capture;
  JitSettings jit;
  static GlobalSnapshot take(const CaptureRuntime& rt = CaptureRuntime::process());
  std::string diff(const GlobalSnapshot& initial) const;  // "" when equal
};

// Fresh compile state for the next trial: the process runtime's flag, patch
// and counters; LibTorch's settings back to their process-initial values; the
// attention kernel's cache and counters. Call with no worker thread running.
void reset_for_trial();

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_ORACLES_H_
