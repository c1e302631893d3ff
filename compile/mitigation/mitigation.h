// compile/mitigation/mitigation.h -- what users do around torch.compile to
// survive the capture-flag races (docs/ARCHITECTURE.md, mitigations), as switchable,
// measurable strategies. LibTorch-free.
//
//   none               call as is
//
// What people try first (the report groups these four):
//   lock_first_call    a process lock around each thread's FIRST call only
//                      (fails: later recompiles and cache hits run unlocked)
//   module_shim        sys.modules['torch.fx._symbolic_trace'] replaced, after
//                      the compiled wrappers exist, by a module whose flag is
//                      always false (fails exactly as none: the check reads the
//                      flag through its function's __globals__, the original)
//   patch_check        the check's predicate (is_fx_tracing) patched to return
//                      false: no flag error any more; a genuine nested capture
//                      goes undetected, the module-call patch still crosses
//                      threads and the lost restore still leaves the flag set
//   disable_check      error_on_nested_capture=false: silent eager fallback
//
// The rest:
//   compile_lock_only  a process lock around calls that will compile (new
//                      signature, or the eager path); cache hits run unlocked
//   global_lock        a process lock around every compiled call (holds for
//                      compiled calls; serialises training; does not cover a
//                      user-level trace elsewhere)
//   rw_lock            shared lock for cache hits, exclusive for compiling calls
//   precompile         warm every declared shape before threads start;
//                      freeze turns a later new shape into an error
//   isolate_thread     thread-local capture flag (the root fix upstream
//                      shipped); the module-call patch stays process-global
//   isolate_process    one process per worker (the trainer's pipeline); in the
//                      micro workloads each logical worker gets a private copy
//                      of the compile runtime -- the state a separate process has
#ifndef RACELAB_COMPILE_MITIGATION_MITIGATION_H_
#define RACELAB_COMPILE_MITIGATION_MITIGATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "racelab/sync.h"
#include "compile/capture_state.h"

namespace racelab::compile::mitigation {

// In display order, the order of names().
enum class Mitigation {
  kNone,
  kLockFirstCall,
  kModuleShim,
  kPatchCheck,
  kDisableCheck,
  kCompileLockOnly,
  kGlobalLock,
  kRwLock,
  kPrecompile,
  kIsolateThread,
  kIsolateProcess,
};

// In display order; the names racelab accepts. The one list of mitigation
// names: workloads, scenarios and reports take it from here.
const std::vector<std::string>& names();
// Throws std::invalid_argument naming the valid choices.
Mitigation parse(const std::string& name);
const char* name(Mitigation m);

// The group a report shows a mitigation under: kTriedFirst for the four fixes
// people reach for first (lock_first_call, module_shim, patch_check,
// disable_check), "" for the others.
inline constexpr const char* kTriedFirst = "what people try first";
const char* group(Mitigation m);

// What the mitigation changes in the compile runtime before wrappers are made:
// isolate_thread -> thread-local flag; disable_check -> error_on_nested_capture
// off (bound into wrappers made afterwards, as upstream).
void configure_runtime(Mitigation m, compile::CaptureRuntime& rt);

// What the mitigation changes once the compiled wrappers exist (a user's fix
// applied after `torch.compile` ran): module_shim installs the always-false
// shim module in place of the flag's owner -- wrappers made before keep reading
// the original through their check's __globals__; patch_check patches the
// check's predicate, which every wrapper looks up at each call.
void apply_after_wrappers(Mitigation m, compile::CaptureRuntime& rt);

// Guards one compiled callable the way the mitigation prescribes. Thread-safe.
class Guard {
 public:
  explicit Guard(Mitigation m);
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

  Mitigation mitigation() const { return m_; }
  // Runs `call`. `will_compile` says whether this call is going to capture or
  // compile (asked only by the mitigations that need it).
  void run(const std::function<bool()>& will_compile, const std::function<void()>& call);

 private:
  Mitigation m_;
  uint64_t id_;  // keys the per-thread "first call done" set
  racelab::Mutex lock_{racelab::compile::points::kMitigationLock};
  racelab::SharedMutex rw_{racelab::compile::points::kMitigationRwLock};
};

}  // namespace racelab::compile::mitigation

#endif  // RACELAB_COMPILE_MITIGATION_MITIGATION_H_
