// cli/bench/scheduling.cpp -- the cost of control (see bench.h).
#include "cli/bench/bench.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "engine/run_trial.h"
#include "engine/worker_channel.h"
#include "racelab/workload.h"

namespace racelab::cli::bench {

namespace {

// One in-process trial of bench_ping_pong (2 threads, `points` each) under a
// per-trial strategy spec, with every decision mirrored into a shared trace as
// a supervised worker mirrors it (wrapping around, so no step skips it).
// Returns the trial's wall ms; *steps its steps.
double ping_pong_ms(const json& strategy, int64_t points, SharedTrace* trace, int64_t* steps) {
  TrialSpec spec;
  spec.scenario = "bench";
  spec.workload = "bench_ping_pong";
  spec.mitigation = "none";
  spec.threads = 2;
  spec.knobs = {{"points", points}};
  spec.strategy = strategy;
  spec.max_steps = 4 * points + 100;
  TrialHooks hooks;
  trace->count.store(0);
  hooks.on_decision = [trace](const DecisionView& d) {
    if (trace->count.load(std::memory_order_relaxed) >= kTraceMax) trace->count.store(0);
    mirror_decision(trace, d);
  };
  TrialResult r = run_trial(spec, hooks);
  if (r.outcome != Outcome::kHolds) throw std::runtime_error("bench ping-pong: " + r.detail);
  *steps = r.steps;
  return r.wall_ms;
}

// The cost of one step of a kind: a trial of n and one of 2n points per
// thread, back to back, and the difference of their times over the
// difference of their steps, so what every trial pays once (threads, set-up,
// results) cancels out. The median over rounds; *noise: the median distance
// of a round from it, relative to it.
double per_step_ns(const std::function<json(int64_t)>& spec, int64_t n, int rounds, SharedTrace* trace,
                   double* noise) {
  std::vector<double> each;
  for (int i = 0; i < rounds; ++i) {
    double ms[2];
    int64_t steps[2];
    for (int k = 0; k < 2; ++k) ms[k] = ping_pong_ms(spec(n << k), n << k, trace, &steps[k]);
    each.push_back((ms[1] - ms[0]) * 1e6 / std::max<int64_t>(1, steps[1] - steps[0]));
  }
  const double ns = median(each);
  std::vector<double> distance;
  for (double x : each) distance.push_back(std::abs(x - ns));
  *noise = median(distance) / std::max(1e-9, std::abs(ns));
  return ns;
}

// The two costs of a step:
//  - keep: the strategy keeps the running thread though another could run
//    (a follow spec with no prefix never preempts: threads 1 and 2 each run
//    their points through while the other is runnable);
//  - switch: every step hands the turn to the other thread (a follow prefix
//    1,2,1,2,...), a wake-up of a waiting thread each time.
json step_costs(const Options& o) {
  auto trace = std::make_unique<SharedTrace>();
  const int rounds = std::max(7, 2 * o.repeats + 1);
  auto keep = [](int64_t) { return json{{"kind", "follow"}, {"prefix", json::array()}}; };
  auto alternate = [](int64_t points) {
    json prefix = json::array();
    for (int64_t i = 0; i + 2 < 2 * points; ++i) prefix.push_back(i % 2 == 0 ? 1 : 2);
    return json{{"kind", "follow"}, {"prefix", prefix}};
  };
  double keep_noise = 0, switch_noise = 0;
  const double keep_ns = per_step_ns(keep, o.quick ? 2000 : 60000, rounds, trace.get(), &keep_noise);
  const double switch_ns = per_step_ns(alternate, o.quick ? 200 : 4000, rounds, trace.get(), &switch_noise);
  return {{"keep_ns", keep_ns},
          {"switch_ns", switch_ns},
          {"switch_over_keep", switch_ns / std::max(1e-9, keep_ns)},
          {"keep_noise", keep_noise},
          {"switch_noise", switch_noise},
          {"rounds", rounds},
          {"keep_goal_ns", 50},
          {"switch_goal_ns", 2000}};
}

}  // namespace

json bench_scheduling(const Options& o) {
  json out;
  out["step"] = step_costs(o);
  const int64_t points = o.quick ? 200 : 2000;
  const int64_t trials = o.quick ? 2 : 5;
  auto per_step_ns = [&](const std::string& strategy) {
    racelab::CellSpec s;
    s.workload = "bench_ping_pong";
    s.mitigation = "none";
    s.strategy = strategy;
    s.threads = 2;
    s.knobs = {{"points", points}};
    s.max_trials = trials;
    s.supervised = false;
    auto r = run(s);
    double ms = 0;
    int64_t steps = 0;
    for (auto& t : r.records) ms += t.wall_ms, steps += t.steps;
    // Free running records no steps: divide by the points reached instead.
    int64_t denom = steps > 0 ? steps : points * 2 * static_cast<int64_t>(r.records.size());
    return json{{"strategy", strategy}, {"ns_per_step", ms * 1e6 / std::max<int64_t>(1, denom)},
                {"trial_ms", ms / std::max<size_t>(1, r.records.size())}};
  };
  json controlled = per_step_ns("random"), free = per_step_ns("os");
  out["ping_pong"] = {{"controlled", controlled}, {"free", free},
                      {"handoff_ns", controlled["ns_per_step"]},
                      {"controlled_over_free", controlled["trial_ms"].get<double>() /
                                                   std::max(1e-9, free["trial_ms"].get<double>())}};
  for (std::string wl : {"direct_leak", "stuck_true"}) {
    json row;
    for (std::string strategy : {"os", "random"}) {
      racelab::CellSpec s;
      s.workload = wl;
      s.mitigation = "global_lock";  // a race-free run: both strategies do the same work
      s.strategy = strategy;
      s.threads = 2;
      s.max_trials = o.quick ? 3 : 30;
      s.supervised = false;
      auto r = run(s);
      double ms = 0;
      for (auto& t : r.records) ms += t.wall_ms;
      row[strategy] = {{"trials_per_s", r.records.size() / std::max(1e-9, ms / 1e3)},
                       {"trial_ms", ms / std::max<size_t>(1, r.records.size())}};
    }
    row["controlled_over_free"] = row["random"]["trial_ms"].get<double>() / std::max(1e-9, row["os"]["trial_ms"].get<double>());
    out[wl] = row;
  }
  return out;
}

}  // namespace racelab::cli::bench
