// cli/bench/scheduling.cpp -- the cost of control (see bench.h).
#include "cli/bench/bench.h"

#include <algorithm>
#include <cmath>
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
// a supervised worker mirrors it. Returns the trial's wall ms; *steps its steps.
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
  hooks.on_decision = [trace](const Decision& d) { mirror_decision(trace, d); };
  TrialResult r = run_trial(spec, hooks);
  if (r.outcome != Outcome::kHolds) throw std::runtime_error("bench ping-pong: " + r.detail);
  *steps = r.steps;
  return r.wall_ms;
}

// The two costs of a step, each as (controlled trial - free trial) / steps:
//  - keep: the strategy keeps the running thread though another could run
//    (a follow spec with no prefix never preempts: threads 1 and 2 each run
//    their points through while the other is runnable);
//  - switch: every step hands the turn to the other thread (a follow prefix
//    1,2,1,2,...), a wake-up of a waiting thread each time.
json step_costs(const Options& o) {
  auto trace = std::make_unique<SharedTrace>();
  const int64_t keep_points = o.quick ? 2000 : 30000, switch_points = o.quick ? 500 : 5000;
  json alternate = json::array();
  for (int64_t i = 0; i + 2 < 2 * switch_points; ++i) alternate.push_back(i % 2 == 0 ? 1 : 2);
  const json keep_spec = {{"kind", "follow"}, {"prefix", json::array()}};
  const json switch_spec = {{"kind", "follow"}, {"prefix", alternate}};
  const json free_spec = {{"kind", "free"}};
  // Each figure is the best of its rounds: on a shared machine a round is
  // only ever slowed down by others, never sped up.
  std::vector<double> keep_ns, switch_ns;
  int64_t keep_steps = 0, switch_steps = 0, ignored = 0;
  double free_keep_ms = 1e300, free_switch_ms = 1e300;
  const int rounds = std::max(5, 2 * o.repeats);
  for (int i = 0; i < rounds; ++i) {
    free_keep_ms = std::min(free_keep_ms, ping_pong_ms(free_spec, keep_points, trace.get(), &ignored));
    free_switch_ms = std::min(free_switch_ms, ping_pong_ms(free_spec, switch_points, trace.get(), &ignored));
  }
  for (int i = 0; i < rounds; ++i) {
    double keep_ms = ping_pong_ms(keep_spec, keep_points, trace.get(), &keep_steps);
    double switch_ms = ping_pong_ms(switch_spec, switch_points, trace.get(), &switch_steps);
    keep_ns.push_back((keep_ms - free_keep_ms) * 1e6 / std::max<int64_t>(1, keep_steps));
    switch_ns.push_back((switch_ms - free_switch_ms) * 1e6 / std::max<int64_t>(1, switch_steps));
  }
  const double keep = *std::min_element(keep_ns.begin(), keep_ns.end());
  const double sw = *std::min_element(switch_ns.begin(), switch_ns.end());
  // How far the typical round lies above the best: what --compare calls noise.
  auto noise = [](const std::vector<double>& v, double best) {
    return (median(v) - best) / std::max(1e-9, std::abs(best));
  };
  return {{"keep_ns", keep},
          {"switch_ns", sw},
          {"switch_over_keep", sw / std::max(1e-9, keep)},
          {"keep_noise", noise(keep_ns, keep)},
          {"switch_noise", noise(switch_ns, sw)},
          {"keep_steps", keep_steps},
          {"switch_steps", switch_steps},
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
