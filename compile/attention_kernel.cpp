// compile/attention_kernel.cpp -- the trainer's compiled masked
// attention: the active mitigation around a CompiledFunction around the eager
// masked attention, where PyTorch users have torch.compile(flex_attention).
#include "compile/attention_kernel.h"

#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "racelab/point.h"
#include "compile/attention_math.h"
#include "compile/compiled_function.h"
#include "compile/point_names.h"
#include "compile/mitigation/mitigation.h"

namespace racelab::compile {
namespace {

struct AttentionState {
  std::string mitigation_name = "none";
  mitigation::Mitigation mitigation = mitigation::Mitigation::kNone;
  std::unique_ptr<mitigation::Guard> guard;
  std::unique_ptr<CompiledFunction> fn;
};

AttentionState& state() {
  static AttentionState* s = [] {
    auto* st = new AttentionState();
    st->guard = std::make_unique<mitigation::Guard>(st->mitigation);
    st->fn = std::make_unique<CompiledFunction>("masked_attention", masked_attention_fn, CaptureRuntime::process());
    return st;
  }();
  return *s;
}

// Rebuilds the wrapper so it binds the entry check under the current config
// (upstream: a wrapper binds its check when it is made).
void rebuild(AttentionState& s) {
  CaptureRuntime& rt = CaptureRuntime::process();
  // Start from upstream's defaults: a variant left by an earlier trial (e.g.
  // isolate_thread's thread-local flag) must not leak into this mitigation.
  rt.set_variants(Variants{});
  mitigation::configure_runtime(s.mitigation, rt);
  rt.reset();
  s.guard = std::make_unique<mitigation::Guard>(s.mitigation);
  s.fn = std::make_unique<CompiledFunction>("masked_attention", masked_attention_fn, rt);
  mitigation::apply_after_wrappers(s.mitigation, rt);  // the user's fix, applied once torch.compile has run
}

}  // namespace

const std::vector<std::string>& mitigation_names() { return mitigation::names(); }

void set_attention_mitigation(const std::string& m) {
  AttentionState& s = state();
  s.mitigation = mitigation::parse(m);  // throws with the valid choices
  s.mitigation_name = m;
  rebuild(s);
}

const std::string& attention_mitigation() { return state().mitigation_name; }

void precompile_attention(const std::function<void()>& run_every_declared_shape, bool freeze) {
  run_every_declared_shape();
  state().fn->freeze(freeze);
}

at::Tensor call_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  AttentionState& s = state();
  racelab::point(points::kCompiledEnter);
  const std::vector<at::Tensor> inputs{q, k, v, mask};
  std::vector<at::Tensor> out;
  s.guard->run([&] { return s.fn->will_compile(inputs); }, [&] { out = (*s.fn)(inputs); });
  racelab::point(points::kCompiledExit);
  return out.at(0);
}

AttentionStats attention_stats() {
  const CompiledStats c = state().fn->stats();
  AttentionStats a;
  a.calls = c.calls;
  a.compiles = c.compiles;
  a.cache_hits = c.cache_hits;
  a.fallbacks = c.fallbacks + c.silent_fallbacks;
  a.errors = c.errors;
  a.compile_seconds = c.compile_seconds;
  return a;
}

void reset_attention() { rebuild(state()); }

}  // namespace racelab::compile
