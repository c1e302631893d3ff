#include "campaign/matrix.h"
#include "campaign/scenario_exec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "engine/driver.h"
#include "engine/trial_plan.h"

namespace racelab::campaign {

int64_t scaled_count(int64_t n, double scale) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(static_cast<double>(n) * scale - 1e-9)));
}

namespace {

// dfs:P and dpor:P: an exhaustiveness proof needs their whole search.
bool exhaustive_strategy(const std::string& name) {
  try {
    return parse_strategy(name).exhaustive();
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// A `holds_over N` clause needs N trials over its cells together: each cell
// gets its share of N, in proportion to its trial budget, as trials its time
// cap cannot cut. Without this a loaded machine, slower per trial, runs fewer
// trials within the seconds and fails the clause ("only X of the N trials").
void guard_holds_over(const std::vector<Scenario>& scenarios, double scale, std::vector<PlannedCell>* cells) {
  for (const Scenario& s : scenarios)
    for (const auto& e : s.expectations) {
      if (e.holds_over <= 0) continue;
      std::vector<PlannedCell*> matched;
      int64_t budget = 0;
      for (auto& c : *cells)
        if (c.spec.scenario == s.name && c.spec.mitigation == e.mitigation &&
            e.matches(c.spec.strategy, c.spec.threads)) {
          matched.push_back(&c);
          budget += c.spec.max_trials;
        }
      const int64_t needed = scaled_count(e.holds_over, scale);
      for (PlannedCell* c : matched) {
        const int64_t share = (needed * c->spec.max_trials + budget - 1) / std::max<int64_t>(1, budget);
        c->spec.min_trials = std::max(c->spec.min_trials, std::min(c->spec.max_trials, share));
      }
    }
}

}  // namespace

std::vector<PlannedCell> plan_cells(const std::vector<Scenario>& scenarios, const PlanOptions& options) {
  std::vector<PlannedCell> cells;
  for (size_t si = 0; si < scenarios.size(); ++si) {
    const Scenario& s = scenarios[si];
    for (const auto& mitigation : s.mitigations) {
      const Expectation* e = s.expectation_for(mitigation);
      for (int threads : s.threads) {
        for (const auto& budget : s.strategies) {
          if (!budget.threads.empty() &&
              std::find(budget.threads.begin(), budget.threads.end(), threads) == budget.threads.end())
            continue;
          for (uint64_t seed : s.seeds) {
            PlannedCell c;
            c.index = cells.size();
            c.scenario = si;
            CellSpec& spec = c.spec;
            spec.scenario = s.name;
            spec.workload = engine_workload(s.workload);
            spec.mitigation = mitigation;
            spec.strategy = budget.strategy;
            spec.knobs = !s.exec.is_null()    ? exec_cell_knobs(s, mitigation, threads)
                         : !s.pyrun.is_null() ? pyrun_cell_knobs(s, mitigation, threads)
                                              : s.knobs;
            spec.threads = threads;
            spec.seed = seed;
            spec.max_trials = scaled_count(budget.trials, options.budget_scale);
            spec.max_seconds = budget.seconds * options.budget_scale;
            spec.stop_at_first_failure = options.ci;
            spec.supervised = s.supervised;
            spec.trial_timeout_s = s.trial_timeout_s;
            spec.schedule_dir = options.schedule_dir;
            if (e && e->reproduces_within > 0 && e->matches(budget.strategy, threads)) {
              const int64_t budget_trials = spec.max_trials;
              if (spec.max_trials < e->reproduces_within) {
                spec.max_trials = e->reproduces_within;
                spec.stop_at_first_failure = true;
              }
              spec.min_trials = e->reproduces_within;
              // Decided at its first failure (scenarios/SCHEMA.md, "When a cell
              // stops"): it stops there, once it has the trials its rate needs.
              // Not when a max_rate clause needs the rate over the whole budget.
              if (!options.ci && e->max_rate < 0) {
                spec.stop_at_first_failure = true;
                spec.rate_trials = std::min(budget_trials, kRateTrials);
              }
            }
            // An exhaustiveness proof needs the whole search: never scaled, never cut by time.
            if (e && e->exhaustive_preemptions >= 0 && e->matches(budget.strategy, threads) &&
                exhaustive_strategy(budget.strategy)) {
              spec.max_trials = budget.trials;
              spec.min_trials = budget.trials;
            }
            cells.push_back(std::move(c));
          }
        }
      }
    }
  }
  guard_holds_over(scenarios, options.budget_scale, &cells);
  return cells;
}

bool parse_shard(const std::string& text, Shard* shard) {
  int i = 0, n = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &i, &n, &tail) != 2) return false;
  if (n < 1 || i < 1 || i > n) return false;
  shard->index = i - 1;
  shard->count = n;
  return true;
}

std::vector<PlannedCell> select_shard(const std::vector<PlannedCell>& cells, const Shard& shard) {
  std::vector<PlannedCell> out;
  for (const auto& c : cells) {
    PlannedCell mine = c;
    mine.spec.part = {shard.index, shard.count, static_cast<uint64_t>(c.index)};
    if (part_has_trials(mine.spec.part, c.spec.max_trials, trial_block(c.spec.strategy))) out.push_back(mine);
  }
  return out;
}

}  // namespace racelab::campaign
