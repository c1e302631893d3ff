// compile/mitigation/mitigation.cpp -- see mitigation.h.
#include "compile/mitigation/mitigation.h"

#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <unordered_set>

namespace racelab::compile::mitigation {
namespace {
std::atomic<uint64_t> g_next_guard{1};
}

const std::vector<std::string>& names() {
  static const std::vector<std::string> n{"none",        "lock_first_call", "module_shim",    "patch_check",
                                          "disable_check", "compile_lock_only", "global_lock", "rw_lock",
                                          "precompile",  "isolate_thread",  "isolate_process"};
  return n;
}

const char* group(Mitigation m) {
  switch (m) {
    case Mitigation::kLockFirstCall:
    case Mitigation::kModuleShim:
    case Mitigation::kPatchCheck:
    case Mitigation::kDisableCheck:
      return kTriedFirst;
    default:
      return "";
  }
}

Mitigation parse(const std::string& s) {
  const auto& n = names();
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == s) return static_cast<Mitigation>(i);
  std::string all;
  for (const auto& x : n) all += (all.empty() ? "" : ", ") + x;
  throw std::invalid_argument("unknown mitigation '" + s + "', expected one of: " + all);
}

const char* name(Mitigation m) { return names().at(static_cast<size_t>(m)).c_str(); }

void configure_runtime(Mitigation m, compile::CaptureRuntime& rt) {
  compile::Variants v = rt.variants();
  if (m == Mitigation::kIsolateThread) v.flag_scope = compile::FlagScope::kThreadLocal;
  rt.set_variants(v);
  rt.set_error_on_nested_capture(m != Mitigation::kDisableCheck);
}

void apply_after_wrappers(Mitigation m, compile::CaptureRuntime& rt) {
  if (m == Mitigation::kModuleShim) rt.install_module(std::make_shared<compile::AlwaysFalseFlagModule>());
  if (m == Mitigation::kPatchCheck) rt.patch_predicate(true);
}

Guard::Guard(Mitigation m) : m_(m), id_(g_next_guard++) {}

void Guard::run(const std::function<bool()>& will_compile, const std::function<void()>& call) {
  switch (m_) {
    case Mitigation::kLockFirstCall: {
      thread_local std::unordered_set<uint64_t> done;
      if (done.count(id_) == 0) {
        done.insert(id_);
        std::lock_guard<racelab::Mutex> lock(lock_);
        call();
        return;
      }
      call();
      return;
    }
    case Mitigation::kCompileLockOnly:
      if (will_compile()) {
        std::lock_guard<racelab::Mutex> lock(lock_);
        call();
      } else {
        call();
      }
      return;
    case Mitigation::kGlobalLock: {
      std::lock_guard<racelab::Mutex> lock(lock_);
      call();
      return;
    }
    case Mitigation::kRwLock:
      if (will_compile()) {
        std::unique_lock<racelab::SharedMutex> lock(rw_);
        call();
      } else {
        std::shared_lock<racelab::SharedMutex> lock(rw_);
        call();
      }
      return;
    default:  // none, module_shim, patch_check, disable_check, precompile, isolate_* act elsewhere
      call();
      return;
  }
}

}  // namespace racelab::compile::mitigation
