// cli/bench/fallback.cpp -- what a silent eager fallback costs per attention call (see bench.h).
#include "cli/bench/bench.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "compile/attention_math.h"
#include "compile/capture_state.h"
#include "compile/compiled_function.h"

namespace racelab::cli::bench {

// One attention call with its backward, as a training step makes it.
double time_calls(int64_t calls, const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& f,
                  const std::vector<at::Tensor>& inputs) {
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) {
    auto out = f(inputs);
    if (!out.at(0).requires_grad()) throw std::runtime_error(fmt::format("bench fallback: call {} returned no grad", i));
    out.at(0).sum().backward();
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
}

json bench_fallback(const Options& o) {
  namespace tc = racelab::compile;
  const int64_t calls = o.quick ? 5 : 60;
  at::manual_seed(7);
  // (at:: factories ignore requires_grad in TensorOptions: set it on the tensor.)
  auto qkv = [] { return at::randn({8, 4, 48, 16}).set_requires_grad(true); };
  std::vector<at::Tensor> in{qkv(), qkv(), qkv(), at::ones({48, 48}, at::kBool).tril()};
  tc::CaptureRuntime rt;
  rt.set_error_on_nested_capture(false);  // disable_check, before the wrapper is made (it binds the check)
  tc::CompiledFunction fn("masked_attention", tc::masked_attention_fn, rt);
  time_calls(3, [&](const auto& x) { return fn(x); }, in);  // capture, then the executor's profiling runs
  // Alternate the paths in rounds and keep each path's median, so a burst of
  // load on this shared machine lands on both paths alike.
  const int rounds = o.quick ? 1 : 7;
  std::vector<double> compiled, fallback, eager_path;
  for (int r = 0; r < rounds; ++r) {
    compiled.push_back(time_calls(calls, [&](const auto& x) { return fn(x); }, in));
    rt.write_flag(true);  // another thread's capture holds the flag: every call falls back silently
    fallback.push_back(time_calls(calls, [&](const auto& x) { return fn(x); }, in));
    rt.write_flag(false);
    // Past the recompile limit: flex_attention's eager path compiles on every call.
    eager_path.push_back(time_calls(calls, [&](const auto& x) {
      return tc::run_eager_path(rt, "masked_attention", tc::masked_attention_fn, x);
    }, in));
  }
  auto spread = [](const std::vector<double>& v) {
    return (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / median(v);
  };
  double compiled_us = median(compiled), fallback_us = median(fallback), eager_path_us = median(eager_path);
  int64_t silent = fn.stats().silent_fallbacks;
  return {{"calls", calls},
          {"rounds", rounds},
          {"noise", std::max(spread(compiled), spread(fallback))},
          {"compiled_us", compiled_us},
          {"silent_fallback_us", fallback_us},
          {"silent_fallbacks_counted", silent},
          {"fallback_over_compiled", fallback_us / compiled_us},
          {"eager_path_us", eager_path_us},
          {"eager_path_over_compiled", eager_path_us / compiled_us}};
}

}  // namespace racelab::cli::bench
