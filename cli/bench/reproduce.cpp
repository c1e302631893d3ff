// cli/bench/reproduce.cpp -- time to reproduce each race, per strategy (see bench.h).
#include "cli/bench/bench.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "racelab/workload.h"
#include "reports/stats.h"

namespace racelab::cli::bench {

json bench_reproduce(const Options& o) {
  json out = json::array();
  const std::vector<std::string> races{"direct_leak",  "stuck_true",      "transient_false",         "module_patch",
                                       "recompile_after_warmup", "user_trace_outside_lock", "jit_setting_restore"};
  const std::vector<std::string> strategies{"os", "os+jitter", "random", "pct:1", "pct:2", "pct:3"};
  for (const auto& wl : races) {
    if (!racelab::find_workload(wl)) continue;
    for (const auto& strategy : strategies) {
      racelab::CellSpec s;
      s.workload = wl;
      s.mitigation = "none";
      s.strategy = strategy;
      s.threads = 2;
      s.max_trials = o.quick ? 4 : o.reproduce_trials;
      s.max_seconds = o.quick ? 5 : 20;
      s.supervised = true;
      auto r = run(s);
      // Trials are independent, so the gaps between failures (the first one
      // counted from the start) are samples of "trials to the first failure".
      std::vector<double> gaps, gap_ms;
      int64_t last = 0;
      double since_ms = 0;
      for (auto& t : r.records) {
        since_ms += t.wall_ms;
        if (t.outcome != "holds") {
          gaps.push_back(static_cast<double>(t.trial + 1 - last));
          gap_ms.push_back(since_ms);
          last = t.trial + 1;
          since_ms = 0;
        }
      }
      auto ci = racelab::reports::wilson_interval(r.summary.failures, r.summary.trials);
      out.push_back({{"race", wl},
                     {"strategy", strategy},
                     {"trials", r.summary.trials},
                     {"failures", r.summary.failures},
                     {"p", r.summary.trials ? double(r.summary.failures) / r.summary.trials : 0.0},
                     {"p_low", ci.low},
                     {"p_high", ci.high},
                     {"median_trials_to_failure", gaps.empty() ? json(nullptr) : json(median(gaps))},
                     {"median_ms_to_failure", gap_ms.empty() ? json(nullptr) : json(median(gap_ms))},
                     {"pct_floor", r.summary.pct_floor}});
      std::fprintf(stderr, "  reproduce %-26s %-10s %3lld/%-3lld failed\n", wl.c_str(), strategy.c_str(),
                   (long long)r.summary.failures, (long long)r.summary.trials);
    }
  }
  return out;
}

}  // namespace racelab::cli::bench
