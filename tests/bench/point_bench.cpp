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
// strategy decides and keeps. Trials of 50,000 steps (a fresh scheduler
// each, outside the timing), as a worker runs them; the mirror wraps around
// so no step skips it.
void BM_ControlledPointKeep(benchmark::State& state) {
  constexpr int64_t kTrialSteps = 50000;
  auto trace = std::make_unique<racelab::SharedTrace>();
  racelab::Scheduler::Options opt;
  opt.max_steps = 2 * kTrialSteps;
  opt.on_decision = [t = trace.get()](const racelab::DecisionView& d) {
    if (t->count.load(std::memory_order_relaxed) >= racelab::kTraceMax) t->count.store(0);
    racelab::mirror_decision(t, d);
  };
  std::unique_ptr<racelab::Strategy> strategy;
  std::unique_ptr<racelab::Scheduler> sched;
  auto end_trial = [&] {
    racelab::detach();
    if (sched) sched->exit_main();
    sched.reset();
  };
  int64_t left = 0;
  for (auto _ : state) {
    if (left-- == 0) {
      state.PauseTiming();
      end_trial();
      strategy = racelab::make_strategy({{"kind", "random"}}, 1);
      sched = std::make_unique<racelab::Scheduler>(strategy.get(), opt);
      sched->enter_main();
      racelab::attach(sched.get());
      left = kTrialSteps - 1;
      state.ResumeTiming();
    }
    racelab::point("bench.keep");
  }
  end_trial();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ControlledPointKeep);
}  // namespace

BENCHMARK_MAIN();
