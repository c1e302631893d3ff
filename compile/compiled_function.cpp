// compile/compiled_function.cpp -- see compiled_function.h.
#include "compile/compiled_function.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <sstream>

#include <ATen/core/grad_mode.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/common_subexpression_elimination.h>
#include <torch/csrc/jit/passes/constant_pooling.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "racelab/point.h"
#include "compile/point_names.h"
#include "compile/trial_phases.h"

namespace racelab::compile {
namespace {

// Captures `fn` on `inputs` with LibTorch's tracer. The tracer's state is
// thread-local: a trace in another thread never records here -- only the
// process-global module-call patch crosses threads, as upstream's does.
std::shared_ptr<torch::jit::Graph> trace_graph(const TensorFn& fn, const std::vector<at::Tensor>& inputs,
                                               std::vector<at::Tensor>* outputs) {
  PhaseScope phase(Phase::kTrace);
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  // An exception thrown inside the traced function (a NestedCaptureError from
  // a nested compiled call) must not leave this thread's tracing state set.
  // (Only a trace this call started: a nested one must leave the outer alone.)
  struct Abandon {
    bool outer = torch::jit::tracer::isTracing();
    ~Abandon() {
      if (!outer && torch::jit::tracer::isTracing()) torch::jit::tracer::abandon();
    }
  } abandon_on_unwind;
  auto traced = torch::jit::tracer::trace(
      std::move(stack),
      [&fn](torch::jit::Stack in) {
        std::vector<at::Tensor> args;
        args.reserve(in.size());
        for (auto& v : in) args.push_back(v.toTensor());
        auto outs = fn(args);
        return torch::jit::Stack(outs.begin(), outs.end());
      },
      [](const at::Tensor&) { return std::string(); }, /*strict=*/false);
  if (outputs != nullptr)
    for (auto& v : traced.second) outputs->push_back(v.toTensor());
  return traced.first->graph;
}

// Real graph passes, in the order TorchScript's own pipeline runs them.
void optimise(std::shared_ptr<torch::jit::Graph>& graph) {
  torch::jit::EliminateDeadCode(graph);
  torch::jit::ConstantPropagation(graph);
  torch::jit::ConstantPooling(graph);
  torch::jit::EliminateCommonSubexpression(graph);
  torch::jit::EliminateDeadCode(graph);
}

std::vector<at::Tensor> unpack(torch::jit::Stack& stack) {
  std::vector<at::Tensor> out;
  for (auto& v : stack) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTuple()) {
      for (auto& e : v.toTupleRef().elements()) out.push_back(e.toTensor());
    } else {
      throw std::runtime_error("compiled graph returned a non-tensor value: " + v.tagKind());
    }
  }
  return out;
}

}  // namespace

ShapeNotPrecompiledError::ShapeNotPrecompiledError(const std::string& function, const std::string& signature)
    : std::runtime_error("compiled function '" + function + "' is frozen (precompile mitigation) and got a shape " +
                         "it was not warmed up with: " + signature) {}

std::string signature_of(const std::vector<at::Tensor>& inputs) {
  std::ostringstream s;
  s << (at::GradMode::is_enabled() ? "grad" : "nograd");
  for (const auto& t : inputs) {
    s << '|' << c10::toString(t.scalar_type()) << '[';
    for (int64_t i = 0; i < t.dim(); ++i) s << (i ? "," : "") << t.size(i);
    s << "]:" << t.device() << (t.requires_grad() ? ":rg" : "");
  }
  return s.str();
}

struct CompiledFunction::Entry {
  std::shared_ptr<torch::jit::Graph> graph;
  std::unique_ptr<torch::jit::GraphExecutor> executor;
  std::vector<std::string> module_calls;
  std::atomic<int64_t> runs{0};  // for the phase split (trial_phases.h)
};

CompiledFunction::CompiledFunction(std::string name, TensorFn fn, CaptureRuntime& runtime, int recompile_limit)
    : name_(std::move(name)),
      fn_(std::move(fn)),
      runtime_(runtime),
      recompile_limit_(recompile_limit),
      check_(runtime.make_entry_check()),
      table_(std::make_shared<Table>()) {}

CompiledFunction::~CompiledFunction() = default;

std::shared_ptr<CompiledFunction::Entry> CompiledFunction::lookup(const std::string& sig) const {
  std::shared_ptr<const Table> table;
  if (runtime_.variants().cache == CacheSync::kSynchronised) {
    std::shared_lock<racelab::SharedMutex> lock(cache_mu_);
    table = table_;
  } else {
    table = table_;  // unsynchronised on purpose (the variant under test)
  }
  auto it = table->find(sig);
  return it == table->end() ? nullptr : it->second;
}

void CompiledFunction::insert(const std::string& sig, std::shared_ptr<Entry> entry) {
  if (runtime_.variants().cache == CacheSync::kSynchronised) {
    std::unique_lock<racelab::SharedMutex> lock(cache_mu_);
    auto next = std::make_shared<Table>(*table_);
    (*next)[sig] = std::move(entry);
    table_ = std::move(next);
    return;
  }
  // Read, copy, publish -- without a lock. Two threads publishing at once lose
  // one entry (the lost update the unsynchronised variant exposes).
  auto next = std::make_shared<Table>(*table_);
  (*next)[sig] = std::move(entry);
  // Names no object: table_ is read unlocked in steps that name the compile
  // lock (the lookup after taking it), so its unlocked writer must be
  // dependent on everything.
  racelab::point(points::kCacheInsert);
  table_ = std::move(next);
}

bool CompiledFunction::will_compile(const std::vector<at::Tensor>& inputs) const {
  return lookup(signature_of(inputs)) == nullptr;
}

std::shared_ptr<CompiledFunction::Entry> CompiledFunction::compile(const std::vector<at::Tensor>& inputs) {
  const auto t0 = std::chrono::steady_clock::now();
  CaptureRuntime::CompilingScope compiling(runtime_);
  racelab::point(points::kCompileStart, racelab::private_object(), racelab::Access::kWrite);
  auto entry = std::make_shared<Entry>();
  auto recorder = std::make_shared<ModuleCallRecorder>(name_);
  {
    // The capture computes throw-away outputs; no autograd graph is needed.
    at::NoGradGuard no_grad;
    capture_scope(runtime_, recorder, [&] { entry->graph = trace_graph(fn_, inputs, nullptr); });
  }
  entry->module_calls = recorder->calls();
  // Passes and executor on this compile's own graph; then the caller takes
  // the cache lock, or (unsynchronised cache) copies the table, whose only
  // writer names no object.
  racelab::point(points::kCompilePasses, racelab::private_object(), racelab::Access::kWrite);
  {
    PhaseScope phase(Phase::kBuild);
    optimise(entry->graph);
    // LibTorch's simple executor: it builds the entry's execution plan on the
    // first run and runs it. The profiling executor would instrument that run
    // and re-optimise the graph on the second (specialised types,
    // differentiable subgraphs, fusion): LibTorch's JIT tuning, which no race
    // here involves, and 45% of a micro trial's CPU time (docs/RESULTS.md).
    entry->executor = std::make_unique<torch::jit::GraphExecutor>(entry->graph, name_, torch::jit::SIMPLE);
  }
  compiles_++;
  compile_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  return entry;
}

std::vector<at::Tensor> CompiledFunction::run_entry(Entry& entry, const std::vector<at::Tensor>& inputs) {
  // Runs the entry's executor (shared by every caller of this signature),
  // then returns through the caller's mitigation to its next point.
  racelab::point(points::kCompiledRun, &entry, racelab::Access::kWrite);
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  PhaseScope phase(entry.runs++ == 0 ? Phase::kFirstRun : Phase::kRun);
  entry.executor->run(stack);
  return unpack(stack);
}

std::vector<at::Tensor> CompiledFunction::operator()(const std::vector<at::Tensor>& inputs) {
  calls_++;
  ScopedRuntime in_runtime(runtime_);  // the wrapped function's module calls go to our runtime
  const Variants& v = runtime_.variants();
  // The entry check: bound at construction, run before anything else, on
  // every call (cache hits too), outside the compile lock (upstream).
  auto check = [&]() -> bool {
    try {
      return check_.run(name_) == EntryCheck::Verdict::kFallback;
    } catch (const NestedCaptureError&) {
      errors_++;
      throw;
    }
  };
  if (v.check == CheckPlace::kOutsideLock && check()) {
    silent_++;
    return fn_(inputs);  // silently uncompiled
  }

  const std::string sig = signature_of(inputs);
  racelab::point(points::kCacheLookup, &table_, racelab::Access::kRead);
  std::shared_ptr<Entry> entry = lookup(sig);
  if (entry != nullptr) {
    hits_++;
    if (v.check == CheckPlace::kInsideLock) {
      bool fallback;
      {
        std::lock_guard<racelab::RecursiveMutex> lock(runtime_.compile_lock());
        fallback = check();
      }
      if (fallback) {
        silent_++;
        return fn_(inputs);
      }
    }
    return run_entry(*entry, inputs);
  }

  if (frozen_) throw ShapeNotPrecompiledError(name_, sig);
  std::unique_lock<racelab::RecursiveMutex> lock(runtime_.compile_lock());
  if (v.check == CheckPlace::kInsideLock && check()) {
    lock.unlock();
    silent_++;
    return fn_(inputs);
  }
  entry = lookup(sig);  // another thread may have compiled it while we waited
  if (entry == nullptr) {
    if (static_cast<int>(cached_signatures().size()) >= recompile_limit_) {
      // Upstream: cache_size_limit reached -> run the frame without dynamo,
      // i.e. flex_attention's own eager path, which compiles itself.
      lock.unlock();
      fallbacks_++;
      return run_eager_path(runtime_, name_, fn_, inputs);
    }
    entry = compile(inputs);
    if (v.cache == CacheSync::kSynchronised) {
      racelab::point(points::kCacheInsert, racelab::private_object(), racelab::Access::kWrite);  // next: the cache lock
      insert(sig, entry);
    } else {
      lock.unlock();  // the variant publishes after the lock, unsynchronised
      insert(sig, entry);
    }
  } else {
    hits_++;
  }
  if (lock.owns_lock()) lock.unlock();
  return run_entry(*entry, inputs);
}

CompiledStats CompiledFunction::stats() const {
  CompiledStats s;
  s.calls = calls_;
  s.compiles = compiles_;
  s.cache_hits = hits_;
  s.fallbacks = fallbacks_;
  s.silent_fallbacks = silent_;
  s.errors = errors_;
  s.cache_entries = static_cast<int64_t>(cached_signatures().size());
  s.compile_seconds = static_cast<double>(compile_ns_.load()) * 1e-9;
  return s;
}

std::shared_ptr<torch::jit::Graph> CompiledFunction::graph_for(const std::vector<at::Tensor>& inputs) const {
  auto e = lookup(signature_of(inputs));
  return e ? e->graph : nullptr;
}

std::vector<std::string> CompiledFunction::module_calls_for(const std::vector<at::Tensor>& inputs) const {
  auto e = lookup(signature_of(inputs));
  return e ? e->module_calls : std::vector<std::string>{};
}

std::vector<std::string> CompiledFunction::cached_signatures() const {
  std::shared_ptr<const Table> table;
  if (runtime_.variants().cache == CacheSync::kSynchronised) {
    std::shared_lock<racelab::SharedMutex> lock(cache_mu_);
    table = table_;
  } else {
    table = table_;
  }
  std::vector<std::string> out;
  for (const auto& kv : *table) out.push_back(kv.first);
  return out;
}

std::vector<at::Tensor> run_eager_path(CaptureRuntime& rt, const std::string& name, const TensorFn& fn,
                                       const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> outputs;
  ScopedRuntime in_runtime(rt);
  auto recorder = std::make_shared<ModuleCallRecorder>(name + ".eager");
  const bool autograd = at::GradMode::is_enabled() &&
                        std::any_of(inputs.begin(), inputs.end(), [](const at::Tensor& t) { return t.requires_grad(); });
  auto compile = [&] {
    CaptureRuntime::CompilingScope compiling(rt);
    at::AutoGradMode grad(autograd ? false : at::GradMode::is_enabled());  // with autograd the run computes the outputs
    capture_scope(rt, recorder, [&] { trace_graph(fn, inputs, autograd ? nullptr : &outputs); });
  };
  if (!autograd) {
    compilation_env(rt, compile);
    return outputs;
  }
  // With gradients the compiled call traces its forward and backward graphs
  // at every call (upstream: flex_attention's and cond's autograd key,
  // create_fw_bw_graph -> make_fx), after the compile and outside the compile
  // lock: a second capture, which sets the flag and installs the process-wide
  // module-call patch where no lock orders it against other threads' captures.
  auto autograd_recorder = std::make_shared<ModuleCallRecorder>(name + ".eager.fw_bw");
  compilation_env(rt, compile, [&] {
    capture_scope(rt, autograd_recorder, [&] { trace_graph(fn, inputs, &outputs); });
  });
  return outputs;
}

std::shared_ptr<torch::jit::Graph> user_trace(CaptureRuntime& rt, const TensorFn& fn,
                                              const std::vector<at::Tensor>& inputs,
                                              std::vector<std::string>* module_calls) {
  std::shared_ptr<torch::jit::Graph> graph;
  ScopedRuntime in_runtime(rt);
  auto recorder = std::make_shared<ModuleCallRecorder>("user_trace");
  capture_scope(rt, recorder, [&] { graph = trace_graph(fn, inputs, nullptr); });
  if (module_calls != nullptr) *module_calls = recorder->calls();
  return graph;
}

}  // namespace racelab::compile
