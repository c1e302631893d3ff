// compile/micro_workloads.cpp -- see micro_workloads.h.
#include "compile/micro_workloads.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "racelab/point.h"
#include "racelab/sync.h"
#include "compile/attention_math.h"
#include "compile/compiled_function.h"
#include "compile/jit_races.h"
#include "compile/oracles.h"
#include "compile/point_names.h"
#include "compile/mitigation/mitigation.h"
#include "compile/torch_compat.h"
#include "compile/trial_phases.h"

namespace racelab::compile {
namespace {

using mitigation::Mitigation;

struct Shape {
  std::vector<at::Tensor> args;  // q, k, v, mask
  at::Tensor reference;          // eager result
};

double process_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

std::string join(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + "]";
}

// One trial's world: runtimes, compiled functions, the mitigation guard, the
// inputs, and what the oracles saw.
class Trial {
 public:
  explicit Trial(const MicroConfig& cfg)
      : cfg_(cfg), m_(mitigation::parse(cfg.mitigation)), guard_(m_), rt_(CaptureRuntime::process()) {
    if (cfg_.threads < 1) throw std::invalid_argument("knob 'threads' must be >= 1");
    if (cfg_.iterations < 1) throw std::invalid_argument("knob 'iterations' must be >= 1");
    (void)initial_jit_settings();
    rt_.set_variants(cfg_.variants);
    mitigation::configure_runtime(m_, rt_);
    rt_.reset();
    if (m_ == Mitigation::kIsolateProcess) {
      for (int i = 0; i < cfg_.threads; ++i) {
        auto rt = std::make_unique<CaptureRuntime>(rt_.variants());
        rt->set_error_on_nested_capture(rt_.error_on_nested_capture());
        fns_.push_back(std::make_unique<CompiledFunction>("masked_attention", masked_attention_fn, *rt,
                                                          cfg_.recompile_limit));
        private_rts_.push_back(std::move(rt));
      }
    } else {
      fns_.push_back(
          std::make_unique<CompiledFunction>("masked_attention", masked_attention_fn, rt_, cfg_.recompile_limit));
    }
    mitigation::apply_after_wrappers(m_, rt_);  // the user's fix, applied once torch.compile has run
    {
      PhaseScope phase(Phase::kInputs);
      auto gen = at::make_generator<at::CPUGeneratorImpl>(cfg_.seed + 1);
      at::NoGradGuard no_grad;
      for (int64_t L = cfg_.seq; L <= cfg_.seq + cfg_.threads + 1; ++L) {
        Shape s;
        for (int j = 0; j < 3; ++j) s.args.push_back(at::randn({1, cfg_.heads, L, cfg_.dim}, gen));
        s.args.push_back(at::ones({L, L}, at::kBool).tril());
        s.reference = eager_masked_attention(s.args[0], s.args[1], s.args[2], s.args[3]);
        shapes_[L] = std::move(s);
      }
    }
    PhaseScope phase(Phase::kOracle);
    initial_ = GlobalSnapshot::take(rt_);
  }

  const MicroConfig& cfg() const { return cfg_; }
  Mitigation mitigation() const { return m_; }
  CaptureRuntime& runtime_for(int worker) { return private_rts_.empty() ? rt_ : *private_rts_.at(worker); }
  CompiledFunction& fn_for(int worker) { return fns_.size() == 1 ? *fns_[0] : *fns_.at(worker); }

  std::vector<at::Tensor> args(int64_t L) const {
    const Shape& s = shapes_.at(L);
    if (!cfg_.grad) return s.args;
    PhaseScope phase(Phase::kInputs);
    std::vector<at::Tensor> a;
    for (int j = 0; j < 3; ++j) a.push_back(s.args[j].detach().clone().set_requires_grad(true));
    a.push_back(s.args[3]);
    return a;
  }

  // The precompile mitigation: warm every declared shape on this thread, then
  // freeze (a later new shape raises).
  void precompile(const std::vector<int64_t>& declared) {
    if (m_ != Mitigation::kPrecompile) return;
    for (int64_t L : declared) fn_for(0)(args(L));
    fn_for(0).freeze(cfg_.freeze);
  }

  // A compiled attention call through the mitigation, checked against eager.
  // compiled.enter and compiled.exit name the thread's own data: what runs
  // between them and the next point (the workers' loops, the inputs, the
  // result check against the reference) is the thread's or immutable, and
  // the result sink's order is made irrelevant in finish().
  void compiled_call(int worker, int64_t L) {
    racelab::point(points::kCompiledEnter, racelab::private_object(), racelab::Access::kWrite);
    CompiledFunction& fn = fn_for(worker);
    const auto a = args(L);
    std::vector<at::Tensor> out;
    guard_.run([&] { return fn.will_compile(a); }, [&] { out = fn(a); });
    check_result(worker, out, L, "compiled");
    racelab::point(points::kCompiledExit, racelab::private_object(), racelab::Access::kWrite);
  }

  // flex_attention's eager path: compiles itself on every call (always "will compile").
  void eager_path_call(int worker, int64_t L) {
    racelab::point(points::kCompiledEnter, racelab::private_object(), racelab::Access::kWrite);
    const auto a = args(L);
    std::vector<at::Tensor> out;
    guard_.run([] { return true; },
               [&] { out = run_eager_path(runtime_for(worker), "masked_attention", masked_attention_fn, a); });
    check_result(worker, out, L, "eager-path");
    racelab::point(points::kCompiledExit, racelab::private_object(), racelab::Access::kWrite);
  }

  void check_result(int worker, const std::vector<at::Tensor>& out, int64_t L, const char* what) {
    PhaseScope phase(Phase::kOracle);
    at::NoGradGuard no_grad;
    if (out.empty() || !at::allclose(out[0], shapes_.at(L).reference, 1e-4, 1e-5))
      add_wrong("worker " + std::to_string(worker + 1) + ": " + what + " attention output differs from eager");
  }

  // Starts one racelab::Thread per worker, each inside its runtime; an
  // exception ends that worker and is recorded as an error. Every body
  // reaches its first point before it touches anything shared, and after the
  // joins only the joined workers' results are read.
  void run_workers(const std::function<void(int)>& body) {
    std::vector<racelab::Thread> threads;
    for (int i = 0; i < cfg_.threads; ++i) {
      threads.emplace_back(racelab::Touches::kNothingShared, [this, i, &body] {
        ScopedRuntime in_runtime(runtime_for(i));
        try {
          body(i);
        } catch (const racelab::TrialAborted&) {
          throw;
        } catch (const std::exception& e) {
          add_error("worker " + std::to_string(i + 1) + ": " + e.what());
        }
      });
    }
    for (auto& t : threads) t.join(racelab::Touches::kNothingShared);
  }

  void add_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu_);
    result_.errors.push_back(e);
  }
  void add_wrong(const std::string& w) {
    std::lock_guard<std::mutex> lock(mu_);
    wrong_.push_back(w);
  }

  // Errors and wrong results in a fixed order: the order in which workers
  // reported them depends on the schedule, the verdict must not (steps that
  // only report are independent of each other's reports).
  MicroResult finish() {
    std::sort(result_.errors.begin(), result_.errors.end());
    std::sort(wrong_.begin(), wrong_.end());
    for (const std::string& w : wrong_) result_.wrong_result += (result_.wrong_result.empty() ? "" : "; ") + w;
    PhaseScope phase(Phase::kOracle);
    std::string stuck = GlobalSnapshot::take(rt_).diff(initial_);
    for (size_t i = 0; i < private_rts_.size(); ++i) {
      std::string d = private_rts_[i]->snapshot().diff(initial_.capture);
      if (!d.empty()) stuck += (stuck.empty() ? "" : "; ") + ("worker " + std::to_string(i + 1) + "'s runtime: " + d);
    }
    result_.stuck_state = stuck;
    CompiledStats total;
    for (auto& f : fns_) {
      CompiledStats s = f->stats();
      total.calls += s.calls;
      total.compiles += s.compiles;
      total.cache_hits += s.cache_hits;
      total.fallbacks += s.fallbacks;
      total.errors += s.errors;
      total.compile_seconds += s.compile_seconds;
    }
    int64_t silent = rt_.counters().silent_fallbacks;
    int64_t eager = rt_.counters().eager_path_calls;
    for (auto& r : private_rts_) {
      silent += r->counters().silent_fallbacks;
      eager += r->counters().eager_path_calls;
    }
    result_.silent_fallbacks = silent;
    result_.metrics["calls"] = static_cast<double>(total.calls);
    result_.metrics["compiles"] = static_cast<double>(total.compiles);
    result_.metrics["cache_hits"] = static_cast<double>(total.cache_hits);
    result_.metrics["fallbacks"] = static_cast<double>(total.fallbacks);
    result_.metrics["nested_errors"] = static_cast<double>(total.errors);
    result_.metrics["eager_path_calls"] = static_cast<double>(eager);
    result_.metrics["compile_seconds"] = total.compile_seconds;
    return result_;
  }

  std::vector<std::unique_ptr<CompiledFunction>>& fns() { return fns_; }
  // Any other compiling step, through the mitigation.
  void guarded_compile(const std::function<void()>& step) { guard_.run([] { return true; }, step); }

 private:
  MicroConfig cfg_;
  Mitigation m_;
  mitigation::Guard guard_;
  CaptureRuntime& rt_;
  std::vector<std::unique_ptr<CaptureRuntime>> private_rts_;
  std::vector<std::unique_ptr<CompiledFunction>> fns_;
  std::map<int64_t, Shape> shapes_;
  GlobalSnapshot initial_;
  std::mutex mu_;
  std::vector<std::string> wrong_;
  MicroResult result_;
};

std::vector<int64_t> own_shapes(const MicroConfig& c) {
  std::vector<int64_t> v;
  for (int i = 0; i < c.threads; ++i) v.push_back(c.seq + i);
  return v;
}

// ---- the bodies ----------------------------------------------------------------

void direct_leak(Trial& t) {
  const auto& c = t.cfg();
  t.precompile(own_shapes(c));
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) t.compiled_call(w, c.seq + w);
  });
}

void stuck_true(Trial& t) {
  const auto& c = t.cfg();
  t.precompile(own_shapes(c));
  const bool all_eager = c.roles == "eager";
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) {
      if (w % 2 == 0 && !all_eager)
        t.compiled_call(w, c.seq + w);
      else
        t.eager_path_call(w, c.seq + w);
    }
  });
}

void transient_false(Trial& t) {
  const auto& c = t.cfg();
  t.precompile(own_shapes(c));
  t.run_workers([&](int w) {
    if (w % 2 == 1) {
      for (int i = 0; i < c.iterations; ++i) t.eager_path_call(w, c.seq + w);
      return;
    }
    // A user-level trace of a function that calls a compiled function: a
    // genuine nested capture, which the entry check must diagnose.
    TensorFn outer = [&](const std::vector<at::Tensor>& in) {
      t.compiled_call(w, c.seq + w);
      return std::vector<at::Tensor>{in[0] * 2};
    };
    const auto a = t.args(c.seq + w);
    try {
      user_trace(t.runtime_for(w), outer, {a[0]});
      t.add_wrong("worker " + std::to_string(w + 1) +
                  ": a genuine nested capture was not detected (the entry check saw the flag false: transient false)");
    } catch (const NestedCaptureError&) {
      // Correct: the nested capture was diagnosed.
    } catch (const std::exception& e) {
      t.add_wrong("worker " + std::to_string(w + 1) +
                  ": a genuine nested capture was not detected (transient false); instead: " + e.what());
    }
  });
}

// torch_module_patch's roles: worker 1 user-traces (installing the process-wide
// module-call patch, outside any lock a compiled call takes), the others call
// modules eagerly; a call that lands in the trace's recorder is another
// thread's module in its graph.
void module_patch_trace_and_eager(Trial& t) {
  const auto& c = t.cfg();
  t.precompile({c.seq});
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) {
      if (w == 0) {
        std::vector<std::string> calls;
        user_trace(t.runtime_for(w), masked_attention_fn, t.args(c.seq), &calls);
        if (calls != std::vector<std::string>{"masked_attention"})
          t.add_wrong("worker 1: its user trace recorded module calls " + join(calls) +
                      " (another thread's eager calls went through its patch)");
      } else {
        module_call(t.runtime_for(w), "worker" + std::to_string(w + 1) + ".proj");
      }
    }
  });
}

void module_patch(Trial& t) {
  const auto& c = t.cfg();
  if (c.roles == "trace_and_eager") return module_patch_trace_and_eager(t);
  t.precompile({c.seq});
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) {
      if (w % 2 == 0) {
        t.compiled_call(w, c.seq);
        continue;
      }
      // Eager module calls and a user-level trace in another thread.
      module_call(t.runtime_for(w), "worker" + std::to_string(w + 1) + ".proj");
      std::vector<std::string> calls;
      user_trace(t.runtime_for(w), masked_attention_fn, t.args(c.seq + w), &calls);
      if (calls != std::vector<std::string>{"masked_attention"})
        t.add_wrong("worker " + std::to_string(w + 1) + ": its user trace recorded module calls " + join(calls));
    }
  });
  for (size_t f = 0; f < t.fns().size(); ++f) {
    auto calls = t.fns()[f]->module_calls_for(t.args(c.seq));
    if (!calls.empty() && calls != std::vector<std::string>{"masked_attention"})
      t.add_wrong("the capture of masked_attention recorded module calls " + join(calls) +
                  " (another thread's calls landed in it through the global module-call patch)");
  }
}

void recompile_after_warmup(Trial& t) {
  const auto& c = t.cfg();
  // Warm-up before the threads start (every mitigation), then a new shape
  // arrives in worker 1 mid-run.
  for (int w = 0; w < static_cast<int>(t.fns().size()); ++w) t.fn_for(w)(t.args(c.seq));
  t.precompile({c.seq});
  const int64_t fresh = c.seq + c.threads;
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) t.compiled_call(w, (w == 0 && i == 1) ? fresh : c.seq);
  });
}

void user_trace_outside_lock(Trial& t) {
  const auto& c = t.cfg();
  // Nothing warmed but by precompile: as in a real program (and racelab's
  // real-torch twin), each caller's first call compiles -- a capture that
  // installs the process-wide module-call patch -- while the user's trace
  // installs its own. That is what a thread-local flag does not isolate.
  t.precompile({c.seq});
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) {
      if (w == 0)
        user_trace(t.runtime_for(w), masked_attention_fn, t.args(c.seq + 1));
      else
        t.compiled_call(w, c.seq);
    }
  });
}

void unsync_cache(Trial& t) {
  const auto& c = t.cfg();
  t.precompile(own_shapes(c));
  t.run_workers([&](int w) {
    for (int i = 0; i < c.iterations; ++i) t.compiled_call(w, c.seq + w);
  });
  int64_t compiles = 0, entries = 0;
  for (auto& f : t.fns()) {
    compiles += f->stats().compiles;
    entries += f->stats().cache_entries;
  }
  const int64_t signatures = c.threads;  // each worker compiles its own shape once
  // A lost update shows as a missing entry, or as a recompile of a signature
  // that had been compiled already.
  const int64_t lost = (compiles - signatures) + (signatures - entries);
  if (lost > 0)
    t.add_wrong("the compile cache lost " + std::to_string(lost) + " compiled entr" + (lost == 1 ? "y" : "ies") +
                " (unsynchronised publish): " + std::to_string(compiles) + " compiles for " +
                std::to_string(signatures) + " signatures, " + std::to_string(entries) + " cached");
}

void jit_setting_restore(Trial& t) {
  const auto& c = t.cfg();
  const JitSetting setting = parse_jit_setting(c.setting);
  t.run_workers([&](int) {
    for (int i = 0; i < c.iterations; ++i) {
      racelab::point(points::kCompiledEnter, racelab::private_object(), racelab::Access::kWrite);
      t.guarded_compile([&] { compile_with_setting_flipped(setting); });
    }
  });
}

void te_fuser_crash(Trial& t) {
  const auto& c = t.cfg();
  // The fuser configuration is this workload's own, not a race: put back what
  // was there so the global-state oracle judges only the race.
  const JitSettings before = JitSettings::read();
  struct Restore {
    const JitSettings& s;
    ~Restore() { s.apply(); }
  } restore{before};
  enable_te_interpreter();
  const bool shared = c.shared && t.mitigation() != Mitigation::kIsolateProcess;
  std::vector<std::unique_ptr<TeFusedFunction>> fns;
  for (int i = 0; i < (shared ? 1 : c.threads); ++i) fns.push_back(std::make_unique<TeFusedFunction>());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(c.seed + 7);
  at::Tensor x = at::randn({64}, gen), y = at::randn({64}, gen);
  const at::Tensor ref = TeFusedFunction::reference(x, y);
  t.run_workers([&](int w) {
    TeFusedFunction& f = *fns.at(shared ? 0 : w);
    for (int i = 0; i < c.iterations; ++i) {
      at::Tensor out;
      t.guarded_compile([&] { out = f(x, y); });
      if (!at::allclose(out, ref, 1e-4, 1e-5)) {
        t.add_wrong("worker " + std::to_string(w + 1) + ": the TE-fused function returned a wrong result");
        return;
      }
    }
  });
}

struct Info {
  const char* name;
  const char* description;
};

const std::vector<Info>& infos() {
  static const std::vector<Info> v{
      {"direct_leak", "A is capturing (flag true); B calls a compiled function, even a cache hit, and raises"},
      {"stuck_true", "lost restore: the eager path saves true, A restores false, the eager path restores true "
                     "-- the flag is stuck true and the process poisoned"},
      {"transient_false", "the eager path clears the flag while a user trace is really capturing; the genuine "
                          "nested-capture check misses"},
      {"module_patch", "the process-global module-call patch records another thread's module calls into a "
                       "capture, or is reverted by the wrong thread"},
      {"recompile_after_warmup", "all shapes warm, then a new shape recompiles mid-run while others hit the cache"},
      {"user_trace_outside_lock", "a user-level trace sets the flag without the compile lock; a lock around every "
                                  "compiled call does not cover it"},
      {"unsync_cache", "the compile cache published without synchronisation: a lost update drops a compiled entry "
                       "(data race under ThreadSanitizer)"},
      {"jit_setting_restore", "real LibTorch 1.13: a process-global JIT setting (getProfilingMode / "
                              "setTensorExprFuserEnabled) flipped with save/restore around a compile in several "
                              "threads ends wrong; setGraphExecutorOptimize (thread-local) never does"},
      {"te_fuser_crash", "real LibTorch 1.13: concurrent calls into one shared scripted function fused by the "
                         "TensorExpr fuser in interpreter mode corrupt the heap (crash); private copies are fine"},
  };
  return v;
}

}  // namespace

const std::vector<std::string>& micro_workload_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& i : infos()) n.push_back(i.name);
    return n;
  }();
  return names;
}

std::string micro_workload_description(const std::string& workload) {
  for (const auto& i : infos())
    if (workload == i.name) return i.description;
  throw std::invalid_argument("unknown compile workload '" + workload + "'");
}

std::vector<std::string> micro_workload_mitigations(const std::string& workload) {
  (void)micro_workload_description(workload);  // validates the name
  std::vector<std::string> all = mitigation::names();
  if (workload == "jit_setting_restore") {
    // LibTorch's own globals cannot be given a private copy inside one process.
    all.erase(std::remove(all.begin(), all.end(), "isolate_process"), all.end());
  }
  if (workload == "te_fuser_crash") return {"none", "global_lock", "isolate_process"};
  return all;
}

MicroConfig micro_defaults(const std::string& workload) {
  (void)micro_workload_description(workload);
  MicroConfig c;
  c.workload = workload;
  if (workload == "unsync_cache") c.variants.cache = CacheSync::kUnsynchronised;
  if (workload == "jit_setting_restore") c.iterations = 4;
  if (workload == "te_fuser_crash") {
    c.threads = 8;
    c.iterations = 200;
  }
  return c;
}

std::vector<std::string> micro_workload_roles(const std::string& workload) {
  if (workload == "stuck_true") return {"mixed", "eager"};
  if (workload == "module_patch") return {"mixed", "trace_and_eager"};
  return {"mixed"};
}

bool micro_needs_free_running(const std::string& workload) { return workload == "te_fuser_crash"; }

MicroResult run_micro(const MicroConfig& config) {
  (void)micro_workload_description(config.workload);
  const auto accepted = micro_workload_mitigations(config.workload);
  if (std::find(accepted.begin(), accepted.end(), config.mitigation) == accepted.end())
    throw std::invalid_argument("workload '" + config.workload + "' does not accept mitigation '" +
                                config.mitigation + "'");
  const auto t0 = std::chrono::steady_clock::now();
  const auto roles = micro_workload_roles(config.workload);
  if (std::find(roles.begin(), roles.end(), config.roles) == roles.end())
    throw std::invalid_argument("workload '" + config.workload + "' has no roles '" + config.roles + "'");
  const double cpu0 = process_cpu_ms();
  Trial t(config);
  const std::string& w = config.workload;
  if (w == "direct_leak") direct_leak(t);
  else if (w == "stuck_true") stuck_true(t);
  else if (w == "transient_false") transient_false(t);
  else if (w == "module_patch") module_patch(t);
  else if (w == "recompile_after_warmup") recompile_after_warmup(t);
  else if (w == "user_trace_outside_lock") user_trace_outside_lock(t);
  else if (w == "unsync_cache") unsync_cache(t);
  else if (w == "jit_setting_restore") jit_setting_restore(t);
  else if (w == "te_fuser_crash") te_fuser_crash(t);
  MicroResult r = t.finish();
  // The TE fuser race corrupts the heap; a trial that saw it fail without
  // crashing leaves a process whose next trial -- another cell's, an
  // isolate_process one -- may crash of it. A supervised worker is replaced
  // after it (engine/worker.h, "fresh_worker_after").
  if (w == "te_fuser_crash" && (!r.errors.empty() || !r.wrong_result.empty() || !r.stuck_state.empty()))
    r.metrics["fresh_worker_after"] = 1;
  r.metrics["wall_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Where the trial's CPU time went (trial_phases.h), and all of it: every
  // thread of this process while the trial ran, the scheduler's included.
  for (const auto& [phase, ms] : phase_cpu_ms()) r.metrics["cpu_ms." + phase] = ms;
  r.metrics["cpu_ms.trial"] = process_cpu_ms() - cpu0;
  return r;
}

}  // namespace racelab::compile
