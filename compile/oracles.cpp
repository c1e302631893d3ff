// compile/oracles.cpp -- see oracles.h.
#include "compile/oracles.h"

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include "compile/attention_kernel.h"
#include "compile/trial_phases.h"

// Exported by libtorch_cpu but declared in a header Debian does not ship
// (torch/csrc/jit/codegen/fuser/interface.h).
namespace torch::jit {
TORCH_API bool canFuseOnCPU();
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

namespace racelab::compile {

JitSettings JitSettings::read() {
  JitSettings s;
  s.profiling_mode = torch::jit::getProfilingMode().load();
  s.executor_mode = torch::jit::getExecutorMode().load();
  s.texpr_fuser = torch::jit::tensorExprFuserEnabled();
  s.can_fuse_on_cpu = torch::jit::canFuseOnCPU();
  s.te_must_use_llvm = torch::jit::tensorexpr::getTEMustUseLLVMOnCPU();
  s.executor_optimize = torch::jit::getGraphExecutorOptimize();
  return s;
}

void JitSettings::apply() const {
  torch::jit::getProfilingMode() = profiling_mode;
  torch::jit::getExecutorMode() = executor_mode;
  torch::jit::setTensorExprFuserEnabled(texpr_fuser);
  torch::jit::overrideCanFuseOnCPU(can_fuse_on_cpu);
  torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = te_must_use_llvm;
  torch::jit::setGraphExecutorOptimize(executor_optimize);
}

std::string JitSettings::diff(const JitSettings& initial) const {
  std::string out;
  auto one = [&](const char* name, bool now, bool was) {
    if (now == was) return;
    if (!out.empty()) out += "; ";
    out += std::string("LibTorch ") + name + " is " + (now ? "true" : "false") + " after the trial, was " +
           (was ? "true" : "false");
  };
  one("getProfilingMode()", profiling_mode, initial.profiling_mode);
  one("getExecutorMode()", executor_mode, initial.executor_mode);
  one("tensorExprFuserEnabled()", texpr_fuser, initial.texpr_fuser);
  one("canFuseOnCPU()", can_fuse_on_cpu, initial.can_fuse_on_cpu);
  one("getTEMustUseLLVMOnCPU()", te_must_use_llvm, initial.te_must_use_llvm);
  one("getGraphExecutorOptimize() (this thread)", executor_optimize, initial.executor_optimize);
  return out;
}

const JitSettings& initial_jit_settings() {
  static const JitSettings initial = JitSettings::read();
  return initial;
}

GlobalSnapshot GlobalSnapshot::take(const CaptureRuntime& rt) {
  return GlobalSnapshot{rt.snapshot(), JitSettings::read()};
}

std::string GlobalSnapshot::diff(const GlobalSnapshot& initial) const {
  std::string a = capture.diff(initial.capture);
  std::string b = jit.diff(initial.jit);
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "; " + b;
}

void reset_for_trial() {
  reset_phases();
  initial_jit_settings().apply();
  CaptureRuntime::process().reset();
  reset_attention();
}

}  // namespace racelab::compile
