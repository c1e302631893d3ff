// compile/jit_races.cpp -- see jit_races.h.
#include "compile/jit_races.h"

#include <stdexcept>

#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/jit.h>

#include "racelab/point.h"
#include "compile/oracles.h"
#include "compile/point_names.h"

namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

namespace racelab::compile {

JitSetting parse_jit_setting(const std::string& name) {
  if (name == "profiling_mode") return JitSetting::kProfilingMode;
  if (name == "texpr_fuser") return JitSetting::kTexprFuser;
  if (name == "executor_optimize") return JitSetting::kExecutorOptimize;
  throw std::invalid_argument("knob 'setting': got '" + name +
                              "', expected profiling_mode | texpr_fuser | executor_optimize");
}

bool read_jit_setting(JitSetting s) {
  switch (s) {
    case JitSetting::kProfilingMode: return torch::jit::getProfilingMode().load();
    case JitSetting::kTexprFuser: return torch::jit::tensorExprFuserEnabled();
    case JitSetting::kExecutorOptimize: return torch::jit::getGraphExecutorOptimize();
  }
  return false;
}

void write_jit_setting(JitSetting s, bool value) {
  switch (s) {
    case JitSetting::kProfilingMode: torch::jit::getProfilingMode() = value; return;
    case JitSetting::kTexprFuser: torch::jit::setTensorExprFuserEnabled(value); return;
    case JitSetting::kExecutorOptimize: torch::jit::setGraphExecutorOptimize(value); return;
  }
}

namespace {
bool initial_value(JitSetting s) {
  const JitSettings& i = initial_jit_settings();
  switch (s) {
    case JitSetting::kProfilingMode: return i.profiling_mode;
    case JitSetting::kTexprFuser: return i.texpr_fuser;
    case JitSetting::kExecutorOptimize: return i.executor_optimize;
  }
  return false;
}

// A real, small compile: trace, optimise, execute once with a GraphExecutor.
void small_compile() {
  at::Tensor x = at::ones({4, 4});
  auto traced = torch::jit::tracer::trace(
      torch::jit::Stack{x},
      [](torch::jit::Stack in) {
        at::Tensor t = in.at(0).toTensor();
        return torch::jit::Stack{(t * 2 + 1).relu()};
      },
      [](const at::Tensor&) { return std::string(); }, /*strict=*/false);
  auto graph = traced.first->graph;
  torch::jit::ConstantPropagation(graph);
  torch::jit::EliminateDeadCode(graph);
  torch::jit::GraphExecutor exec(graph, "jit_setting_compile");
  torch::jit::Stack stack{x};
  exec.run(stack);
}
}  // namespace

void compile_with_setting_flipped(JitSetting setting) {
  (void)initial_jit_settings();  // pin the process-initial values before any flip
  const bool compile_value = !initial_value(setting);
  racelab::point(points::kJitSave);
  const bool saved = read_jit_setting(setting);
  racelab::point(points::kJitSet);
  write_jit_setting(setting, compile_value);
  racelab::point(points::kJitCompile);
  try {
    small_compile();
  } catch (...) {
    write_jit_setting(setting, saved);
    throw;
  }
  racelab::point(points::kJitRestore);
  write_jit_setting(setting, saved);
}

// ---- (b) the shared TensorExpr-fused scripted function -----------------------

namespace {
const char* kTeSource = R"JIT(
def fused(x, y):
    z = x * y + x
    w = torch.relu(z) * 2.0 - y
    return torch.sigmoid(w * w + z) * x
)JIT";
}  // namespace

TeFusedFunction::TeFusedFunction() {
  std::shared_ptr<torch::jit::CompilationUnit> cu = torch::jit::compile(kTeSource);
  torch::jit::Function* fn = &cu->get_function("fused");
  cu_ = cu;
  call_ = [fn](const at::Tensor& x, const at::Tensor& y) {
    racelab::point(points::kTeCall);
    return (*fn)({x, y}).toTensor();
  };
}

at::Tensor TeFusedFunction::operator()(const at::Tensor& x, const at::Tensor& y) { return call_(x, y); }

at::Tensor TeFusedFunction::reference(const at::Tensor& x, const at::Tensor& y) {
  at::Tensor z = x * y + x;
  at::Tensor w = at::relu(z) * 2.0 - y;
  return at::sigmoid(w * w + z) * x;
}

std::string last_optimized_graph_text() {
  const auto g = torch::jit::lastExecutedOptimizedGraph();
  return g ? g->toString() : std::string();
}

void enable_te_interpreter() {
  (void)initial_jit_settings();
  torch::jit::overrideCanFuseOnCPU(true);
  torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
  torch::jit::setTensorExprFuserEnabled(true);
  torch::jit::getProfilingMode() = true;
  torch::jit::getExecutorMode() = true;
}

}  // namespace racelab::compile
