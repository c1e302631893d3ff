// compile/compiled_function.h -- torch.compile, rebuilt on LibTorch.
//
// A CompiledFunction wraps a tensor function. On a call it
//   1. runs the entry check (bound at construction; outside the compile lock,
//      on cache hits too -- upstream's eval_frame wrapper);
//   2. looks up a cache entry guarded by the input signature (shapes, dtypes,
//      device, requires_grad) -- dynamo's guards;
//   3. on a miss, takes the process-wide recursive compile lock, captures the
//      function with LibTorch's tracer (torch::jit::tracer::trace, thread-local
//      tracing state) inside a capture scope (flag set, module-call patch
//      installed), runs real graph passes (DCE, constant propagation, CSE,
//      constant pooling) and builds a torch::jit::GraphExecutor (LibTorch's
//      simple executor: no profiling runs, no re-optimisation);
//   4. after `recompile_limit` entries, falls back to the eager path, which --
//      like flex_attention's -- compiles itself on every call inside a
//      compilation environment that writes the flag before taking the lock;
//   5. runs the entry with the GraphExecutor. Autograd works through it: the
//      executor runs ATen ops with autograd recording.
#ifndef RACELAB_COMPILE_COMPILED_FUNCTION_H_
#define RACELAB_COMPILE_COMPILED_FUNCTION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "compile/capture_state.h"

namespace torch::jit {
struct Graph;
struct GraphExecutor;
}  // namespace torch::jit

namespace racelab::compile {

using TensorFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

// Raised when `freeze` is on (precompile mitigation) and a signature that was
// not warmed up arrives.
class ShapeNotPrecompiledError : public std::runtime_error {
 public:
  explicit ShapeNotPrecompiledError(const std::string& function, const std::string& signature);
};

// The guard key: "f32[2,4,8,16]:cpu:grad|..." for every input.
std::string signature_of(const std::vector<at::Tensor>& inputs);

struct CompiledStats {
  int64_t calls = 0;
  int64_t compiles = 0;          // captures by this function (first compile + recompiles)
  int64_t cache_hits = 0;
  int64_t fallbacks = 0;         // calls that ran the eager path (recompile limit)
  int64_t silent_fallbacks = 0;  // calls the entry check sent uncompiled (check off)
  int64_t errors = 0;            // NestedCaptureError raised by this function
  int64_t cache_entries = 0;
  double compile_seconds = 0;
};

class CompiledFunction {
 public:
  // `module_name` is what the function records through the module-call patch
  // (see ModuleCallRecorder); the wrapper binds the runtime's entry check now.
  CompiledFunction(std::string name, TensorFn fn, CaptureRuntime& runtime = current_runtime(),
                   int recompile_limit = 8);
  ~CompiledFunction();
  CompiledFunction(const CompiledFunction&) = delete;
  CompiledFunction& operator=(const CompiledFunction&) = delete;

  std::vector<at::Tensor> operator()(const std::vector<at::Tensor>& inputs);

  // Would a call with these inputs capture/compile (or take the eager path)?
  bool will_compile(const std::vector<at::Tensor>& inputs) const;
  // precompile mitigation: a new signature raises ShapeNotPrecompiledError.
  void freeze(bool frozen) { frozen_ = frozen; }

  CompiledStats stats() const;
  // The optimised graph and the module calls recorded during its capture, for
  // the signature of `inputs` (nullptr / empty when not cached).
  std::shared_ptr<torch::jit::Graph> graph_for(const std::vector<at::Tensor>& inputs) const;
  std::vector<std::string> module_calls_for(const std::vector<at::Tensor>& inputs) const;
  // All compiled signatures (for the unsynchronised-cache oracle).
  std::vector<std::string> cached_signatures() const;

  const std::string& name() const { return name_; }
  CaptureRuntime& runtime() { return runtime_; }
  const EntryCheck& entry_check() const { return check_; }

 private:
  struct Entry;
  using Table = std::map<std::string, std::shared_ptr<Entry>>;

  std::shared_ptr<Entry> lookup(const std::string& sig) const;
  void insert(const std::string& sig, std::shared_ptr<Entry> entry);
  std::shared_ptr<Entry> compile(const std::vector<at::Tensor>& inputs);
  std::vector<at::Tensor> run_entry(Entry& entry, const std::vector<at::Tensor>& inputs);

  std::string name_;
  TensorFn fn_;
  CaptureRuntime& runtime_;
  int recompile_limit_;
  EntryCheck check_;
  std::atomic<bool> frozen_{false};

  // The cache is copy-on-write: readers take a snapshot of the table pointer.
  // Synchronised: the pointer is read and swapped under cache_mu_. Unsynchronised
  // (a variant): plain read-copy-publish with no lock -- a lost update drops a
  // concurrently compiled entry, and the pointer itself is a data race.
  mutable racelab::SharedMutex cache_mu_{points::kCacheLock};
  std::shared_ptr<const Table> table_;

  mutable std::atomic<int64_t> calls_{0}, compiles_{0}, hits_{0}, fallbacks_{0}, silent_{0}, errors_{0};
  std::atomic<int64_t> compile_ns_{0};
};

// flex_attention's eager path as a free function: every call captures `fn`
// inside compilation_env() (save, clear the flag, take the lock, compile,
// restore) and returns the captured run's outputs. With gradients (grad mode
// on, an input that requires grad) it captures `fn` a second time after the
// compile, outside the compile lock, as upstream traces flex's forward and
// backward graphs (make_fx) at every call: that capture's flag and
// module-call patch are ordered by no lock.
std::vector<at::Tensor> run_eager_path(CaptureRuntime& rt, const std::string& name, const TensorFn& fn,
                                       const std::vector<at::Tensor>& inputs);

// A user-level trace (make_fx in user code, not a compile): a capture scope
// with LibTorch's tracer and NO compile lock. Returns the traced graph; the
// module calls recorded during it go to `module_calls` when given.
std::shared_ptr<torch::jit::Graph> user_trace(CaptureRuntime& rt, const TensorFn& fn,
                                              const std::vector<at::Tensor>& inputs,
                                              std::vector<std::string>* module_calls = nullptr);

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_COMPILED_FUNCTION_H_
