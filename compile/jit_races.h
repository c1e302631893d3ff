// compile/jit_races.h -- two real races in LibTorch 1.13 itself,
// reproduced, not fixed.
//
// (a) A process-global JIT setting flipped with save/restore around a compile
//     (the same shape as upstream's _set_compilation_env): getProfilingMode()
//     and setTensorExprFuserEnabled() are process-global, so overlapping
//     save/restore in two threads loses a restore and the setting ends wrong.
//     setGraphExecutorOptimize() is thread-local in LibTorch and never does.
// (b) Concurrent calls into ONE shared scripted function fused by the
//     TensorExpr fuser in its interpreter mode (canFuseOnCPU overridden, TE
//     must-use-LLVM off): the heap gets corrupted. Run it only in a worker
//     process -- a crash is the expected outcome.
#ifndef RACELAB_COMPILE_JIT_RACES_H_
#define RACELAB_COMPILE_JIT_RACES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace racelab::compile {

enum class JitSetting { kProfilingMode, kTexprFuser, kExecutorOptimize };
// "profiling_mode" | "texpr_fuser" | "executor_optimize"; throws
// std::invalid_argument naming the accepted values.
JitSetting parse_jit_setting(const std::string& name);
bool read_jit_setting(JitSetting s);
void write_jit_setting(JitSetting s, bool value);

// One compile in a "compilation environment" for `setting`: save it, set it to
// the opposite of its process-initial value, really compile (trace, optimise
// and run a small graph with a GraphExecutor), restore the saved value.
// Points: jit_setting.save / .set / .compile / .restore.
void compile_with_setting_flipped(JitSetting setting);

// (b) A scripted function (torch::jit::compile) the TensorExpr fuser fuses on
// CPU in interpreter mode. Configure LibTorch first with enable_te_interpreter().
class TeFusedFunction {
 public:
  TeFusedFunction();
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& y);
  // The eager reference of the same computation.
  static at::Tensor reference(const at::Tensor& x, const at::Tensor& y);

 private:
  std::shared_ptr<void> cu_;  // torch::jit::CompilationUnit, kept opaque here
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> call_;
};

// The graph the executor last ran on this thread, as text ("" before any):
// whether it holds a prim::TensorExprGroup tells that the fuser really fused,
// so that "no crash" on a LibTorch version is not "nothing was fused".
std::string last_optimized_graph_text();

// overrideCanFuseOnCPU(true), TE must-use-LLVM off, TE fuser on, profiling
// executor on. reset_for_trial() puts the process-initial values back.
void enable_te_interpreter();

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_JIT_RACES_H_
