// cli/bench/search.cpp -- search strength on the hard-bug catalogue (see bench.h).
//
// Every strategy on every hard-bug workload (scenarios/register/hard_bugs.cpp),
// one cell per seed, each stopping at its first failure or at the budget. A
// seed whose cell found nothing counts as "more than the budget": the median
// and the 90th percentile are over all seeds, so they read "> budget" when
// more than half (a tenth) of the seeds missed. dfs has no coin flips, so one
// cell stands for all seeds. Trials run in this process (the programs cannot
// crash), so schedules/s is the engine's own rate.
#include "cli/bench/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "engine/driver.h"
#include "racelab/workload.h"

namespace racelab::cli::bench {

namespace {

struct HardBug {
  const char* workload;
  int threads;
};
constexpr HardBug kHardBugs[] = {{"hard_long_prefix", 2}, {"hard_depth3", 2}, {"hard_order8", 8}};

// The q-quantile (nearest rank) of trials-to-first-failure, misses as +inf.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

const std::vector<std::string>& search_workloads() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const HardBug& bug : kHardBugs) v.push_back(bug.workload);
    return v;
  }();
  return names;
}

const std::vector<std::string>& search_strategies() {
  static const std::vector<std::string> names{"os", "random", "pct:1", "pct:2", "pct:3", "pos", "surw", "dfs:2", "dpor:2", "auto"};
  return names;
}

json bench_search(const Options& o) {
  const int seeds = o.quick ? 3 : o.search_seeds;
  const int64_t budget = o.quick ? std::min<int64_t>(o.search_budget, 30) : o.search_budget;
  json rows = json::array();
  auto wanted = [](const std::vector<std::string>& only, const std::string& name) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  };
  for (const HardBug& bug : kHardBugs) {
    if (!racelab::find_workload(bug.workload) || !wanted(o.search_only_workloads, bug.workload)) continue;
    for (const std::string& strategy : search_strategies()) {
      if (!wanted(o.search_only_strategies, strategy)) continue;
      const bool deterministic = racelab::parse_strategy(strategy).exhaustive();
      std::vector<double> ttf;
      int found = 0;
      int64_t trials = 0;
      double wall = 0;
      for (int seed = 1; seed <= (deterministic ? 1 : seeds); ++seed) {
        racelab::CellSpec s;
        s.workload = bug.workload;
        s.mitigation = "none";
        s.strategy = strategy;
        s.threads = bug.threads;
        s.seed = static_cast<uint64_t>(seed);
        s.max_trials = budget;
        s.stop_at_first_failure = true;
        s.supervised = false;
        s.trial_timeout_s = 10;
        auto r = run(s);
        trials += r.summary.trials;
        wall += r.summary.wall_s;
        if (r.summary.first_failure_trial >= 0) {
          ++found;
          ttf.push_back(static_cast<double>(r.summary.first_failure_trial + 1));
        } else {
          ttf.push_back(std::numeric_limits<double>::infinity());
        }
      }
      const int ran = deterministic ? 1 : seeds;
      json row = {{"workload", bug.workload},
                  {"strategy", strategy},
                  {"seeds", ran},
                  {"deterministic", deterministic},
                  {"found", found},
                  {"median_trials", finite_or_null(quantile(ttf, 0.5))},
                  {"p90_trials", finite_or_null(quantile(ttf, 0.9))},
                  {"trials", trials},
                  {"schedules_per_s", wall > 0 ? static_cast<double>(trials) / wall : 0.0}};
      std::fprintf(stderr, "  search %-17s %-7s found %2d/%-2d median %s\n", bug.workload, strategy.c_str(), found,
                   ran, row["median_trials"].is_null() ? "> budget" : fmt_num(row["median_trials"].get<double>(), 1).c_str());
      rows.push_back(std::move(row));
    }
  }
  return {{"budget", budget}, {"seeds", seeds}, {"rows", rows}};
}

}  // namespace racelab::cli::bench
