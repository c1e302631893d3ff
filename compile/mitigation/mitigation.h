// compile/mitigation/mitigation.h -- what users do around torch.compile to
// survive the capture-flag races (docs/ARCHITECTURE.md, mitigations), as switchable,
// measurable strategies. LibTorch-free.
//
//   none               call as is
//   lock_first_call    a process lock around each thread's FIRST call only
//                      (fails: later recompiles and cache hits run unlocked)
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
//   disable_check      error_on_nested_capture=false: silent eager fallback
#ifndef RACELAB_COMPILE_MITIGATION_MITIGATION_H_
#define RACELAB_COMPILE_MITIGATION_MITIGATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "racelab/sync.h"
#include "compile/capture_state.h"

namespace trainer::mitigation {

enum class Mitigation {
  kNone,
  kLockFirstCall,
  kCompileLockOnly,
  kGlobalLock,
  kRwLock,
  kPrecompile,
  kIsolateThread,
  kIsolateProcess,
  kDisableCheck,
};

// In display order; the names racelab accepts.
const std::vector<std::string>& names();
// Throws std::invalid_argument naming the valid choices.
Mitigation parse(const std::string& name);
const char* name(Mitigation m);

// What the mitigation changes in the compile runtime before wrappers are made:
// isolate_thread -> thread-local flag; disable_check -> error_on_nested_capture
// off (bound into wrappers made afterwards, as upstream).
void configure_runtime(Mitigation m, compile::CaptureRuntime& rt);

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
  racelab::Mutex lock_{trainer::points::kMitigationLock};
  racelab::SharedMutex rw_{trainer::points::kMitigationRwLock};
};

}  // namespace trainer::mitigation

#endif  // RACELAB_COMPILE_MITIGATION_MITIGATION_H_
