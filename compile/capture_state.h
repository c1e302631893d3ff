// compile/capture_state.h -- the process-wide capture state of the
// compile layer, modelled on upstream PyTorch (docs/ARCHITECTURE.md). LibTorch-free on
// purpose: ThreadSanitizer builds compile this without torch.
//
// What lives here, and which upstream object it stands for:
//   - the capture flag      torch.fx._symbolic_trace._is_fx_tracing_flag
//   - the compile lock      torch._dynamo's process-wide recursive compile lock
//   - capture_scope()       the FX tracer (make_fx / AOTAutograd): save, set true,
//                           trace, restore
//   - compilation_env()     flex_attention's eager path (_set_compilation_env):
//                           save, set FALSE, take the lock, compile, restore.
//                           It writes the flag BEFORE it takes the lock.
//   - EntryCheck            the check at the entry of every dynamo-optimized
//                           function (eval_frame `_fn`): runs on cache hits too,
//                           outside the lock, and is bound when the wrapper is made
//   - the module-call patch the FX tracer's process-wide patch of Module.__call__
//   - FlagModule            the module object that owns the flag, as
//                           sys.modules['torch.fx._symbolic_trace'] names it; the
//                           check reads the flag through the module it was bound
//                           to (its function's __globals__), not by name
//
// Every upstream design choice that matters to a race is a named Variant; the
// defaults are upstream's. A CaptureRuntime is one copy of all that global state:
// the process has one (process()); the isolate_process mitigation gives each
// logical worker a private copy, which is what a separate process would give.
#ifndef RACELAB_COMPILE_CAPTURE_STATE_H_
#define RACELAB_COMPILE_CAPTURE_STATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "racelab/sync.h"
#include "compile/point_names.h"

namespace racelab::compile {

enum class FlagScope { kGlobal, kThreadLocal };
enum class FlagType { kPlain, kAtomic };
enum class CheckPlace { kOutsideLock, kInsideLock };
enum class EagerOrder { kBeforeLock, kAfterLock };
enum class CacheSync { kSynchronised, kUnsynchronised };
enum class PatchScope { kGlobal, kThreadLocal };

// Named compile-layer variants. Defaults are upstream's (the races reproduce).
struct Variants {
  FlagScope flag_scope = FlagScope::kGlobal;       // "flag_scope": global | thread_local
  FlagType flag_type = FlagType::kPlain;           // "flag_type": plain | atomic
  CheckPlace check = CheckPlace::kOutsideLock;     // "check": outside_lock | inside_lock
  EagerOrder eager_sets_flag = EagerOrder::kBeforeLock;  // "eager_sets_flag": before_lock | after_lock
  CacheSync cache = CacheSync::kSynchronised;      // "cache": synchronised | unsynchronised
  PatchScope patch_scope = PatchScope::kGlobal;    // "patch_scope": global | thread_local

  // Sets one variant by its knob name; throws std::invalid_argument naming the
  // field and the accepted values.
  void set(const std::string& field, const std::string& value);
  std::string get(const std::string& field) const;
  static const std::vector<std::string>& fields();
  // The values `field` accepts, "a | b" (what set's error says).
  static std::string accepted(const std::string& field);
};

// Raised by the entry check: a compiled function was called while a capture is
// in progress and this thread is not compiling.
class NestedCaptureError : public std::runtime_error {
 public:
  explicit NestedCaptureError(const std::string& function);
};

// Records module calls made while a capture's module-call patch is installed.
class ModuleCallRecorder {
 public:
  explicit ModuleCallRecorder(std::string owner) : owner_(std::move(owner)) {}
  void record(const std::string& module);
  std::vector<std::string> calls() const;
  const std::string& owner() const { return owner_; }

 private:
  std::string owner_;
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

struct CaptureCounters {
  std::atomic<int64_t> entry_checks{0};
  std::atomic<int64_t> nested_errors{0};     // NestedCaptureError raised
  std::atomic<int64_t> silent_fallbacks{0};  // check fired, error off: ran uncompiled
  std::atomic<int64_t> captures{0};          // capture scopes entered
  std::atomic<int64_t> eager_path_calls{0};  // compilation environments entered
};

// Global state that must be back to its initial value after a trial.
struct CaptureSnapshot {
  bool flag = false;          // the process-global flag (or this thread's, thread-local scope)
  bool patch_active = false;  // a module-call patch is installed (global scope)
  // "" when equal, else a sentence naming what differs.
  std::string diff(const CaptureSnapshot& initial) const;
};

class CaptureRuntime;

// The module that owns the capture flag. Upstream, is_fx_tracing() reads
// `_is_fx_tracing_flag` as a bare name through its function's __globals__: the
// dictionary of the module it was defined in, fixed when the function was made.
// Replacing sys.modules['torch.fx._symbolic_trace'] with a shim afterwards
// changes what a lookup BY NAME finds, never what that function reads.
class FlagModule {
 public:
  virtual ~FlagModule() = default;
  virtual bool flag() const = 0;
  virtual std::string describe() const = 0;
};

// The shim users install (the module_shim mitigation): its flag is always false.
class AlwaysFalseFlagModule : public FlagModule {
 public:
  bool flag() const override { return false; }
  std::string describe() const override { return "a shim module whose _is_fx_tracing_flag is always False"; }
};

// The entry check, bound when the wrapper is made: it copies the
// error_on_nested_capture setting at that moment (upstream binds the config
// into the wrapper's closure; patching it later affects new wrappers only), and
// the flag's module installed at that moment (the check function's __globals__).
// The predicate itself is looked up at every call, so patching it to return
// false (patch_check) reaches wrappers made before the patch.
class EntryCheck {
 public:
  enum class Verdict { kCompiled, kFallback };
  EntryCheck(CaptureRuntime* runtime, bool error_on_nested);
  // kCompiled: go on with the compiled path. kFallback: run uncompiled (counted).
  // Throws NestedCaptureError when the flag is set, this thread is not
  // compiling, and the bound setting says error.
  Verdict run(const std::string& function) const;
  bool error_on_nested() const { return error_on_nested_; }
  // The module whose flag this check reads (the one installed when it was made).
  const FlagModule& globals() const { return *globals_; }

 private:
  CaptureRuntime* runtime_;
  bool error_on_nested_;
  std::shared_ptr<const FlagModule> globals_;
};

class CaptureRuntime {
 public:
  explicit CaptureRuntime(Variants variants = {});
  CaptureRuntime(const CaptureRuntime&) = delete;
  CaptureRuntime& operator=(const CaptureRuntime&) = delete;

  // The one every thread uses unless it entered a ScopedRuntime.
  static CaptureRuntime& process();

  // Variants and config: change only between trials (no thread running).
  const Variants& variants() const { return variants_; }
  void set_variants(const Variants& v) { variants_ = v; }
  void set_error_on_nested_capture(bool error) { error_on_nested_ = error; }
  bool error_on_nested_capture() const { return error_on_nested_; }
  EntryCheck make_entry_check() { return EntryCheck(this, error_on_nested_); }

  // The capture flag, read and written as the variants say (a plain bool is a
  // real data race, as in upstream; an atomic one is not, but still races
  // logically; a thread-local one cannot leak between threads).
  bool read_flag() const;
  void write_flag(bool value);

  racelab::RecursiveMutex& compile_lock() { return compile_lock_; }

  // What sys.modules['torch.fx._symbolic_trace'] names: the runtime's own
  // module (it reads read_flag()) until a shim replaces it. Wrappers made
  // earlier keep the module they were bound to. Change only with no worker
  // thread running; reset() puts the real module back.
  std::shared_ptr<const FlagModule> installed_module() const { return installed_module_; }
  void install_module(std::shared_ptr<const FlagModule> module) { installed_module_ = std::move(module); }
  const FlagModule& real_module() const { return *real_module_; }

  // patch_check: the check's predicate (is_fx_tracing) replaced by one that
  // returns false. Looked up at every call, by every wrapper. Change only with
  // no worker thread running; reset() undoes it.
  void patch_predicate(bool returns_false) { predicate_patched_ = returns_false; }
  bool predicate_patched() const { return predicate_patched_; }

  // Compiles running in this thread (upstream: "are we compiling?").
  int compiling_depth() const;
  class CompilingScope {
   public:
    explicit CompilingScope(CaptureRuntime& rt);
    ~CompilingScope();
   private:
    CaptureRuntime& rt_;
  };

  // The module-call patch. install returns the previous patch (saved by the
  // installer, restored by revert -- save/restore again, so two overlapping
  // captures in different threads can revert each other's patch).
  std::shared_ptr<ModuleCallRecorder> active_patch() const;
  std::shared_ptr<ModuleCallRecorder> install_patch(std::shared_ptr<ModuleCallRecorder> patch);
  void revert_patch(std::shared_ptr<ModuleCallRecorder> previous);

  // How a step uses the capture flag and the module-call patch (with the
  // recorders a patch points to).
  enum class Use { kNone, kRead, kWrite };
  // The point before such a step, naming what it touches (racelab/point.h):
  // every part that is process-wide (a global flag, a global patch) is one
  // object, the runtime's capture state, so that each pair of steps touching
  // either conflicts; a thread-local part is the thread's own. Counters are
  // atomic increments read only after the workers ended, so they commute
  // and are not named.
  void point(const char* name, Use flag, Use patch) const;

  CaptureCounters& counters() { return counters_; }
  const CaptureCounters& counters() const { return counters_; }

  CaptureSnapshot snapshot() const;
  // Flag false, no patch, counters zero, this thread's thread-local state clear,
  // the real flag module installed, the predicate unpatched. Variants and
  // error_on_nested_capture are kept.
  void reset();

 private:
  struct ThreadState;
  ThreadState& this_thread() const;

  Variants variants_;
  bool error_on_nested_ = true;
  bool flag_plain_ = false;               // FlagType::kPlain, FlagScope::kGlobal
  std::atomic<bool> flag_atomic_{false};  // FlagType::kAtomic, FlagScope::kGlobal
  racelab::RecursiveMutex compile_lock_{points::kCompileLock};
  std::shared_ptr<ModuleCallRecorder> patch_;  // accessed with std::atomic_load/store
  CaptureCounters counters_;
  uint64_t id_;                           // keys thread-local state (addresses get reused)
  std::shared_ptr<const FlagModule> real_module_;
  std::shared_ptr<const FlagModule> installed_module_;
  bool predicate_patched_ = false;
};

// The runtime of the calling thread: process() unless inside a ScopedRuntime.
CaptureRuntime& current_runtime();
class ScopedRuntime {
 public:
  explicit ScopedRuntime(CaptureRuntime& rt);
  ~ScopedRuntime();
 private:
  CaptureRuntime* previous_;
};

// The FX tracer's capture scope: save the flag, set it true, install the
// module-call patch, run `trace`, revert the patch, restore the saved flag.
// Restores on exceptions too (upstream uses try/finally).
void capture_scope(CaptureRuntime& rt, const std::shared_ptr<ModuleCallRecorder>& recorder,
                   const std::function<void()>& trace);

// flex_attention's eager path: save the flag, set it FALSE, take the compile
// lock, run `compile`, release, run `run` (when given), restore the saved
// flag. `run` is what the call does once compiled, outside the compile lock
// but still inside the environment: with gradients, upstream's flex (and
// cond) trace their forward and backward graphs there with make_fx on every
// call -- a capture, flag and Module.__call__ patcher, that no compile lock
// covers. With EagerOrder::kAfterLock the save/clear/restore happen under the
// lock, and `run` after it.
void compilation_env(CaptureRuntime& rt, const std::function<void()>& compile,
                     const std::function<void()>& run = nullptr);

// A module call from any thread: recorded into the active capture's trace when
// a patch is installed (the wrong trace when another thread is capturing).
void module_call(CaptureRuntime& rt, const std::string& module);

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_CAPTURE_STATE_H_
