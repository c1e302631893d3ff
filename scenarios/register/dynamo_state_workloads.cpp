// scenarios/register/dynamo_state_workloads.cpp -- the model twins of races
// in torch._dynamo's process-wide Python state: a few lines of state each, so
// CI without a Python torch covers them (their real-torch twins are
// torch_config_patch, torch_compile_stampede and torch_compiler_stance in
// python/racelab/workloads.py). LibTorch-free.
//
//   config_patch     torch._dynamo.config.patch(...) used as one decorator
//                    object by every thread (#111150, #118260). On torch 2.6
//                    the patch object keeps the values it saved in one dict,
//                    `prior`, and the config is one process-wide value: a
//                    second thread entering finds `prior` full (`assert not
//                    prior`), or saves the first thread's patched value and
//                    restores it last (the config stays patched), or runs its
//                    body after the first thread restored (the patch lost).
//                    Knob config_scope "thread_local": torch 2.14's design
//                    (the saved values and the overrides are ContextVars:
//                    each thread has its own).
//   config_thread_local  the reverse (#173568): with torch 2.14's per-thread
//                    config, a value the main thread set before it started
//                    its workers is not what they read (they see the default).
//   traceback_meta   torch.fx.traceback's should_preserve_node_meta and
//                    current_meta are module globals (#184917): a thread's
//                    node metadata read is another's, or left set.
//   compile_stampede the compiled-code cache is looked up outside the compile
//                    lock and not looked up again under it (#123177): N
//                    threads meeting one new input compile it N times, each
//                    compile counted against the recompile limit; past it the
//                    frame runs eagerly. Knob recheck true: a look-up under
//                    the lock too (the fix).
//   compiler_stance  torch.compiler.set_stance is one process-wide value:
//                    even workers run a debug call under
//                    set_stance("force_eager"), odd workers call a compiled
//                    function, which then runs eagerly; two setters that
//                    overlap restore each other's saved stance, and it stays
//                    force_eager.
//
// Every step names the object it touches (racelab/point.h): the shared
// config, patch, cache and stance are objects, a thread's own copy is private.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "racelab/point.h"
#include "racelab/sync.h"
#include "racelab/workload.h"

namespace {

using racelab::Access;
using racelab::Observation;
using racelab::TrialInput;

// What the workers report, kept in a fixed order (the verdict must not depend
// on the order the schedule let them report in).
struct Reports {
  std::mutex mu;
  std::vector<std::string> errors, wrong;
  int64_t fallbacks = 0;
  void error(const std::string& e) {
    std::lock_guard<std::mutex> lk(mu);
    errors.push_back(e);
  }
  void wrong_result(const std::string& w) {
    std::lock_guard<std::mutex> lk(mu);
    wrong.push_back(w);
  }
  void fallback() {
    std::lock_guard<std::mutex> lk(mu);
    ++fallbacks;
  }
  Observation observe() {
    Observation o;
    std::sort(errors.begin(), errors.end());
    std::sort(wrong.begin(), wrong.end());
    o.errors = errors;
    if (!wrong.empty()) o.wrong_result = wrong.front();
    o.silent_fallbacks = fallbacks;
    return o;
  }
};

std::string worker_name(int w) { return "worker " + std::to_string(w + 1); }

// Runs body(w) on `threads` racelab threads and joins them.
template <class Body>
void run_workers(int threads, Body body) {
  std::vector<racelab::Thread> ts;
  for (int w = 0; w < threads; ++w) ts.emplace_back([&body, w] { body(w); });
  for (auto& t : ts) t.join();
}

// ---- config_patch ------------------------------------------------------------

// One copy of the dynamo config value and of a patch object's saved values.
// 2.6: one of each for the process; 2.14 (thread_local): one per thread.
struct ConfigState {
  int64_t value = 0;               // e.g. recompile_limit's override; 0 = the default
  std::map<std::string, int64_t> prior;  // ConfigPatch's saved values ("prior")
};

constexpr int64_t kPatched = 1;

Observation config_patch(const TrialInput& in) {
  const int64_t iterations = in.knobs.value("iterations", int64_t{2});
  const bool thread_local_scope = in.knobs.value("config_scope", std::string("global")) == "thread_local";
  const std::string m = in.mitigation.empty() ? "none" : in.mitigation;
  const int threads = std::max(1, in.threads);
  Reports reports;
  // isolate_process and thread-local scope: one copy per worker; else one shared.
  const bool private_copies = thread_local_scope || m == "isolate_process";
  std::vector<ConfigState> states(private_copies ? threads : 1);
  racelab::Mutex lock("config_patch.lock");
  run_workers(threads, [&](int w) {
    ConfigState& s = states[private_copies ? w : 0];
    for (int64_t i = 0; i < iterations; ++i) {
      // per_call_patch: a fresh patch object per call, so `prior` is the
      // call's own; the config value is still the process's.
      std::map<std::string, int64_t> own_prior;
      std::map<std::string, int64_t>& prior = m == "per_call_patch" ? own_prior : s.prior;
      std::unique_lock<racelab::Mutex> held(lock, std::defer_lock);
      if (m == "global_lock") held.lock();
      racelab::point("config.patch.enter", &prior, Access::kRead);
      if (!prior.empty()) {
        reports.error(worker_name(w) + ": AssertionError: assert not prior (the shared config.patch object holds "
                                       "another thread's saved values)");
        return;
      }
      racelab::point("config.patch.save", &s.value, Access::kRead);
      prior["recompile_limit"] = s.value;
      racelab::point("config.patch.set", &s.value, Access::kWrite);
      s.value = kPatched;
      racelab::point("config.read", &s.value, Access::kRead);
      if (s.value != kPatched)
        reports.wrong_result(worker_name(w) + ": its patched call ran with the config unpatched (another thread's "
                                              "exit restored it)");
      racelab::point("config.patch.restore", &s.value, Access::kWrite);
      s.value = prior["recompile_limit"];
      prior.clear();
    }
  });
  Observation o = reports.observe();
  for (size_t i = 0; i < states.size(); ++i)
    if (states[i].value != 0)
      o.stuck_state = (states.size() > 1 ? worker_name(static_cast<int>(i)) + "'s " : std::string()) +
                      "dynamo config left patched after every thread joined (recompile_limit override " +
                      std::to_string(states[i].value) + ", was the default)";
  return o;
}

// ---- config_thread_local -----------------------------------------------------

// The reverse of the shared patch (#173568, regression #186537): where the
// config is per thread (torch 2.14's ContextVars), a setting the main thread
// made before it started the workers is not what the workers read -- a new
// thread starts with an empty context, so it sees the default.
Observation config_thread_local(const TrialInput& in) {
  const int64_t iterations = in.knobs.value("iterations", int64_t{2});
  const bool thread_local_scope = in.knobs.value("config_scope", std::string("global")) == "thread_local";
  const std::string m = in.mitigation.empty() ? "none" : in.mitigation;
  const int threads = std::max(1, in.threads);
  Reports reports;
  int64_t main_value = 0;
  racelab::point("config.set_on_main", &main_value, Access::kWrite);
  main_value = kPatched;  // the user's setting, before the threads start
  // Per thread: a fresh context (the default), or a copy of the main thread's
  // (copy_context, and a forked process, which copies its parent).
  const bool inherits = !thread_local_scope || m == "copy_context" || m == "isolate_process";
  std::vector<int64_t> own(threads, inherits ? main_value : 0);
  run_workers(threads, [&](int w) {
    int64_t& value = thread_local_scope || m == "isolate_process" ? own[w] : main_value;
    for (int64_t i = 0; i < iterations; ++i) {
      if (m == "set_in_each_thread") {
        racelab::point("config.set_in_thread", &value, Access::kWrite);
        value = kPatched;
      }
      racelab::point("config.read", &value, Access::kRead);
      if (value != kPatched)
        reports.wrong_result(worker_name(w) + ": it ran with the config's default, not the value the main thread "
                                              "set before it started (the config is per thread)");
    }
  });
  return reports.observe();
}

// ---- traceback_meta ----------------------------------------------------------

// torch.fx.traceback's node metadata (#184917): `should_preserve_node_meta`
// and `current_meta` are module globals (torch 2.6 and 2.14) that
// preserve_node_meta() and set_current_meta(node) save, set and restore. A
// thread reading its node's metadata can read another's, and overlapping
// restores can leave them set.
Observation traceback_meta(const TrialInput& in) {
  const int64_t iterations = in.knobs.value("iterations", int64_t{2});
  const std::string m = in.mitigation.empty() ? "none" : in.mitigation;
  const int threads = std::max(1, in.threads);
  Reports reports;
  struct Meta {
    bool preserve = false;
    int64_t current = -1;  // whose node's metadata; -1: none
  };
  const bool private_copies = m == "isolate_process";
  std::vector<Meta> metas(private_copies ? threads : 1);
  racelab::Mutex lock("traceback_meta.lock");
  run_workers(threads, [&](int w) {
    Meta& g = metas[private_copies ? w : 0];
    for (int64_t i = 0; i < iterations; ++i) {
      std::unique_lock<racelab::Mutex> held(lock, std::defer_lock);
      if (m == "global_lock") held.lock();
      racelab::point("fx.meta.preserve.save", &g, Access::kWrite);  // save both, set preserve
      const Meta saved = g;
      g.preserve = true;
      racelab::point("fx.meta.current.set", &g, Access::kWrite);
      const int64_t saved_current = g.current;
      if (g.preserve) g.current = w;
      racelab::point("fx.meta.current.read", &g, Access::kRead);
      if (g.current != w)
        reports.wrong_result(worker_name(w) + ": the node metadata it read was another thread's (or none)");
      racelab::point("fx.meta.current.restore", &g, Access::kWrite);
      g.current = saved_current;
      racelab::point("fx.meta.preserve.restore", &g, Access::kWrite);
      g = saved;
    }
  });
  Observation o = reports.observe();
  for (size_t i = 0; i < metas.size(); ++i)
    if (metas[i].preserve || metas[i].current != -1)
      o.stuck_state = (metas.size() > 1 ? worker_name(static_cast<int>(i)) + "'s " : std::string()) +
                      "torch.fx.traceback state left set after every thread joined (should_preserve_node_meta " +
                      (metas[i].preserve ? "True" : "False") + ", current_meta " +
                      (metas[i].current < 0 ? "empty" : "of " + worker_name(static_cast<int>(metas[i].current))) + ")";
  return o;
}

// ---- compile_stampede --------------------------------------------------------

struct FrameCache {
  int64_t entries = 0;   // compiled entries of the one frame (a duplicate is an entry too)
  int64_t compiles = 0;  // compiles of the frame: each counts against the recompile limit
};

Observation compile_stampede(const TrialInput& in) {
  const int64_t iterations = in.knobs.value("iterations", int64_t{2});
  const int64_t limit = in.knobs.value("recompile_limit", int64_t{8});
  const bool recheck = in.knobs.value("recheck", false);
  const std::string m = in.mitigation.empty() ? "none" : in.mitigation;
  const int threads = std::max(1, in.threads);
  Reports reports;
  const bool private_copies = m == "isolate_process";
  std::vector<FrameCache> caches(private_copies ? threads : 1);
  racelab::Mutex compile_lock("dynamo.compile_lock");
  racelab::Mutex user_lock("compile_stampede.lock");
  // One call of the compiled function with the trial's one input shape.
  auto call = [&](FrameCache& c) {
    racelab::point("dynamo.cache.lookup", &c.entries, Access::kRead);
    if (c.entries > 0) return;  // a cache hit: runs compiled
    std::lock_guard<racelab::Mutex> lk(compile_lock);
    if (recheck) {
      racelab::point("dynamo.cache.recheck", &c.entries, Access::kRead);
      if (c.entries > 0) return;
    }
    racelab::point("dynamo.compile", &c.compiles, Access::kWrite);
    if (c.compiles >= limit) {
      reports.fallback();  // "torch._dynamo hit config.recompile_limit": runs eagerly from now on
      return;
    }
    ++c.compiles;
    ++c.entries;
  };
  if (m == "precompile") call(caches[0]);  // warmed before the threads start
  run_workers(threads, [&](int w) {
    FrameCache& c = caches[private_copies ? w : 0];
    for (int64_t i = 0; i < iterations; ++i) {
      if (m == "global_lock") {
        std::lock_guard<racelab::Mutex> lk(user_lock);
        call(c);
      } else {
        call(c);
      }
    }
  });
  Observation o = reports.observe();
  int64_t compiles = 0;
  for (size_t i = 0; i < caches.size(); ++i) {
    compiles += caches[i].compiles;
    if (caches[i].compiles > 1)
      o.wrong_result = (caches.size() > 1 ? worker_name(static_cast<int>(i)) + ": " : std::string()) +
                       "one frame and one input shape compiled " + std::to_string(caches[i].compiles) +
                       " times (the cache was looked up outside the compile lock and not again under it)";
  }
  o.metrics["compiles"] = compiles;
  return o;
}

// ---- compiler_stance ---------------------------------------------------------

enum class Stance { kDefault, kForceEager };

Observation compiler_stance(const TrialInput& in) {
  const int64_t iterations = in.knobs.value("iterations", int64_t{2});
  const std::string m = in.mitigation.empty() ? "none" : in.mitigation;
  const int threads = std::max(1, in.threads);
  Reports reports;
  const bool private_copies = m == "isolate_process";
  std::vector<Stance> stances(private_copies ? threads : 1, Stance::kDefault);
  racelab::Mutex lock("compiler_stance.lock");
  run_workers(threads, [&](int w) {
    Stance& stance = stances[private_copies ? w : 0];
    for (int64_t i = 0; i < iterations; ++i) {
      std::unique_lock<racelab::Mutex> held(lock, std::defer_lock);
      if (m == "global_lock") held.lock();
      if (w % 2 == 0) {
        // A debug call run eagerly: under set_stance("force_eager"), or
        // (orig_callable) the compiled function's original code, no stance.
        if (m == "orig_callable") {
          racelab::point("stance.debug_call", racelab::private_object(), Access::kWrite);
          continue;
        }
        racelab::point("stance.save", &stance, Access::kRead);
        const Stance prior = stance;
        racelab::point("stance.set", &stance, Access::kWrite);
        stance = Stance::kForceEager;
        racelab::point("stance.debug_call", racelab::private_object(), Access::kWrite);
        racelab::point("stance.restore", &stance, Access::kWrite);
        stance = prior;
      } else {
        racelab::point("compiled.stance_check", &stance, Access::kRead);
        if (stance == Stance::kForceEager) reports.fallback();  // ran eagerly: another thread's stance
      }
    }
  });
  Observation o = reports.observe();
  for (size_t i = 0; i < stances.size(); ++i)
    if (stances[i] != Stance::kDefault)
      o.stuck_state = (stances.size() > 1 ? worker_name(static_cast<int>(i)) + "'s " : std::string()) +
                      "compiler stance left at force_eager after every thread joined";
  return o;
}

void check_common(const nlohmann::json& k) { racelab::int_knob(k, "iterations", 1, 100000); }

racelab::WorkloadRegistrar config_patch_registrar{racelab::Workload{
    "config_patch",
    "torch._dynamo.config.patch used as one decorator by every thread: `assert not prior`, or the config left "
    "patched, or a call that runs unpatched (torch 2.6); knob config_scope thread_local is torch 2.14's "
    "ContextVar config",
    nlohmann::json{{"iterations", 2}, {"config_scope", "global"}},
    {"none", "per_call_patch", "global_lock", "isolate_process"},
    false,
    [] {},
    &config_patch,
    [](const nlohmann::json& k) {
      check_common(k);
      const auto& s = k.at("config_scope");
      if (!s.is_string() || (s != "global" && s != "thread_local"))
        throw racelab::KnobError("config_scope", s.dump(), "global | thread_local");
    }}};

racelab::WorkloadRegistrar config_thread_local_registrar{racelab::Workload{
    "config_thread_local",
    "a dynamo config value the main thread set before starting its workers: with a per-thread config (knob "
    "config_scope thread_local, torch 2.14's ContextVars) the workers read the default instead",
    nlohmann::json{{"iterations", 2}, {"config_scope", "global"}},
    {"none", "set_in_each_thread", "copy_context", "isolate_process"},
    false,
    [] {},
    &config_thread_local,
    [](const nlohmann::json& k) {
      check_common(k);
      const auto& s = k.at("config_scope");
      if (!s.is_string() || (s != "global" && s != "thread_local"))
        throw racelab::KnobError("config_scope", s.dump(), "global | thread_local");
    }}};

racelab::WorkloadRegistrar traceback_meta_registrar{racelab::Workload{
    "traceback_meta",
    "torch.fx.traceback's node metadata is module-global: a thread reads another thread's node metadata, or "
    "overlapping restores leave should_preserve_node_meta or current_meta set",
    nlohmann::json{{"iterations", 2}},
    {"none", "global_lock", "isolate_process"},
    false,
    [] {},
    &traceback_meta,
    &check_common}};

racelab::WorkloadRegistrar compile_stampede_registrar{racelab::Workload{
    "compile_stampede",
    "threads meet one new input at once: the cache is looked up outside the compile lock and not again under "
    "it, so each compiles the frame, and past the recompile limit the frame runs eagerly",
    nlohmann::json{{"iterations", 2}, {"recompile_limit", 8}, {"recheck", false}},
    {"none", "global_lock", "precompile", "isolate_process"},
    false,
    [] {},
    &compile_stampede,
    [](const nlohmann::json& k) {
      check_common(k);
      racelab::int_knob(k, "recompile_limit", 1, 1000);
    }}};

racelab::WorkloadRegistrar compiler_stance_registrar{racelab::Workload{
    "compiler_stance",
    "torch.compiler.set_stance is process-wide: one thread's force_eager makes another thread's compiled calls "
    "run eagerly, and two overlapping setters leave it stuck",
    nlohmann::json{{"iterations", 2}},
    {"none", "orig_callable", "global_lock", "isolate_process"},
    false,
    [] {},
    &compiler_stance,
    &check_common}};

}  // namespace
