// Cost of an interleaving point with no controller attached (target <= 2 ns),
// measured as the difference from the same loop with points compiled out.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "racelab/point.h"

namespace racelab::bench {
void loop_without_points(int64_t iterations, volatile int64_t* sink);

__attribute__((noinline)) void loop_with_points(int64_t iterations, volatile int64_t* sink) {
  for (int64_t i = 0; i < iterations; ++i) {
    racelab::point("bench.loop");
    *sink = i;
  }
}
}  // namespace racelab::bench

namespace {
constexpr int64_t kInner = 1024;

void BM_LoopPointsCompiledOut(benchmark::State& state) {
  volatile int64_t sink = 0;
  for (auto _ : state) racelab::bench::loop_without_points(kInner, &sink);
  state.SetItemsProcessed(state.iterations() * kInner);
}
BENCHMARK(BM_LoopPointsCompiledOut);

void BM_LoopDisabledPoint(benchmark::State& state) {
  volatile int64_t sink = 0;
  for (auto _ : state) racelab::bench::loop_with_points(kInner, &sink);
  state.SetItemsProcessed(state.iterations() * kInner);
}
BENCHMARK(BM_LoopDisabledPoint);
}  // namespace

BENCHMARK_MAIN();
