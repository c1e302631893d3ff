// cli/bench/scheduling.cpp -- the cost of control (see bench.h).
#include "cli/bench/bench.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "racelab/workload.h"

namespace racelab::cli::bench {

json bench_scheduling(const Options& o) {
  json out;
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
