// Cost of an interleaving point with no controller attached (target <= 2 ns),
// measured as the difference from the same loop with points compiled out;
// and of a controlled point at which the strategy keeps the running thread
// (target <= 50 ns), with decisions mirrored as a worker mirrors them.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <limits>
#include <memory>

#include "engine/scheduler.h"
#include "engine/strategy.h"
#include "engine/worker_channel.h"
#include "racelab/controller.h"
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

// One managed thread under the random strategy: every point is a step the
// strategy decides and keeps. The mirror wraps around so it is never skipped.
void BM_ControlledPointKeep(benchmark::State& state) {
  auto trace = std::make_unique<racelab::SharedTrace>();
  auto strategy = racelab::make_strategy({{"kind", "random"}}, 1);
  racelab::Scheduler::Options opt;
  opt.max_steps = std::numeric_limits<int64_t>::max();
  opt.on_decision = [t = trace.get()](const racelab::Decision& d) {
    if (t->count.load(std::memory_order_relaxed) >= racelab::kTraceMax) t->count.store(0);
    racelab::mirror_decision(t, d);
  };
  racelab::Scheduler sched(strategy.get(), opt);
  sched.enter_main();
  racelab::attach(&sched);
  for (auto _ : state) racelab::point("bench.keep");
  racelab::detach();
  sched.exit_main();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ControlledPointKeep);
}  // namespace

BENCHMARK_MAIN();
