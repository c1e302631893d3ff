// reports/expectation_check.cpp -- see expectation_check.h.
#include "reports/expectation_check.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "engine/driver.h"
#include "engine/outcome.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;

struct Clause {
  std::string name, status, measured;  // status: pass | fail | incomplete
};

// The cells of `s` that expectation `e` covers, as planned at this scale.
std::vector<CellKey> matched_cells(const Scenario& s, const Expectation& e, const std::vector<PlannedCell>& plan) {
  std::vector<CellKey> out;
  for (const auto& c : plan)
    if (c.spec.scenario == s.name && c.spec.mitigation == e.mitigation && e.matches(c.spec.strategy, c.spec.threads))
      out.push_back({s.name, e.mitigation, c.spec.threads, c.spec.strategy, c.spec.seed});
  return out;
}

std::string cell_label(const CellKey& k) {
  return fmt::format("{} threads, {}, seed {}", std::get<2>(k), std::get<3>(k), std::get<4>(k));
}

}  // namespace

json check_expectation(const Scenario& s, const Expectation& e, const std::vector<PlannedCell>& plan,
                       const std::map<CellKey, CellStats>& stats, double scale) {
  const auto cells = matched_cells(s, e, plan);
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  bool all_done = true;
  for (const auto& k : cells) {
    auto it = stats.find(k);
    if (it == stats.end() || !it->second.summary || it->second.summary->value("interrupted", false)) all_done = false;
    if (it == stats.end()) continue;
    trials += it->second.trials;
    failures += it->second.failures;
    for (const auto& [o, n] : it->second.by_outcome) by_outcome[o] += n;
  }
  std::vector<Clause> clauses;
  if (e.reproduces_within > 0) {
    Clause c{fmt::format("reproduces_within {}", e.reproduces_within), "pass", ""};
    std::vector<std::string> late, pending;
    int64_t worst = 0;
    for (const auto& k : cells) {
      auto it = stats.find(k);
      const bool done = it != stats.end() && it->second.summary && !it->second.summary->value("interrupted", false);
      if (it != stats.end() && it->second.first_failure > 0 && it->second.first_failure <= e.reproduces_within) {
        worst = std::max(worst, it->second.first_failure);
      } else if (done || (it != stats.end() && it->second.trials >= e.reproduces_within)) {
        late.push_back(cell_label(k) + (it->second.first_failure > 0
                                            ? fmt::format(" (first failure at trial {})", it->second.first_failure)
                                            : fmt::format(" (no failure in {} trials)", it->second.trials)));
      } else {
        pending.push_back(cell_label(k));
      }
    }
    if (!late.empty()) {
      c.status = "fail";
      c.measured = fmt::format("did not reproduce within {} in {} of {} cells: {}", e.reproduces_within, late.size(),
                               cells.size(), fmt::join(late, "; "));
    } else if (!pending.empty()) {
      c.status = "incomplete";
      c.measured = fmt::format("{} of {} cells not run yet", pending.size(), cells.size());
    } else {
      c.measured = fmt::format("every one of {} cells failed by trial {}", cells.size(), worst);
    }
    clauses.push_back(c);
  }
  if (e.holds_over > 0) {
    const int64_t needed = scaled_count(e.holds_over, scale);
    Clause c{fmt::format("holds_over {}", e.holds_over), "pass", ""};
    if (failures > 0) {
      std::vector<std::string> classes;
      for (const auto& [o, n] : by_outcome)
        if (is_failure(o)) classes.push_back(fmt::format("{} {}", n, o));
      c.status = "fail";
      c.measured = fmt::format("{} failures in {} trials ({})", failures, trials, fmt::join(classes, ", "));
    } else if (trials < needed) {
      const auto infra = by_outcome.find(outcome_name(Outcome::kInfrastructure));
      c.status = all_done ? "fail" : "incomplete";
      c.measured = fmt::format("0 failures, but only {} of the {} trials needed{}{}", trials, needed,
                               all_done ? " ran within the time budgets" : " so far",
                               infra == by_outcome.end() ? ""
                                                         : fmt::format(" ({} more killed from outside, not counted)",
                                                                       infra->second));
    } else {
      c.measured = fmt::format("0 failures in {} trials (needed {})", trials, needed);
    }
    clauses.push_back(c);
  }
  if (!e.outcome.empty() || !e.allowed.empty()) {
    std::set<std::string> ok(e.allowed.begin(), e.allowed.end());
    if (!e.outcome.empty()) ok.insert(e.outcome);
    std::vector<std::string> stray;
    for (const auto& [o, n] : by_outcome)
      if (is_failure(o) && !ok.count(o)) stray.push_back(fmt::format("{} {}", n, o));
    const std::string name = !e.outcome.empty() ? "outcome " + e.outcome : "";
    Clause c{name.empty() ? fmt::format("allowed {}", fmt::join(e.allowed, "|"))
                          : name + (e.allowed.empty() ? "" : fmt::format(" (allowed {})", fmt::join(e.allowed, "|"))),
             "pass", ""};
    const int64_t hits = e.outcome.empty() ? 0 : (by_outcome.count(e.outcome) ? by_outcome.at(e.outcome) : 0);
    if (!stray.empty()) {
      c.status = "fail";
      c.measured = fmt::format("unexpected failure classes: {}", fmt::join(stray, ", "));
    } else if (!e.outcome.empty() && hits == 0) {
      c.status = all_done ? "fail" : "incomplete";
      c.measured = fmt::format("no {} in {} trials", e.outcome, trials);
    } else {
      c.measured = e.outcome.empty() ? fmt::format("{} failures, all allowed", failures)
                                     : fmt::format("{} {} in {} trials", hits, e.outcome, trials);
    }
    clauses.push_back(c);
  }
  if (e.max_rate >= 0) {
    Clause c{fmt::format("max_rate {}", e.max_rate), "pass", ""};
    const double r = rate_of(failures, trials);
    c.measured = fmt::format("rate {:.3f} ({} of {})", r, failures, trials);
    if (trials == 0 || !all_done) c.status = "incomplete";
    if (trials > 0 && all_done && r > e.max_rate) c.status = "fail";
    clauses.push_back(c);
  }
  if (e.exhaustive_preemptions >= 0) {
    Clause c{fmt::format("holds exhaustive_preemptions {}", e.exhaustive_preemptions), "pass", ""};
    // Per matched thread count: the dfs:Q and dpor:Q cells (Q >= P) and whether one completed.
    std::map<int, std::vector<std::string>> searched;  // threads -> "dfs:2 complete (340 schedules)"
    std::map<int, bool> complete;
    // The thread counts where an exhaustive cell was planned (a scenario may run dfs at
    // small thread counts only): the proof is claimed, and demanded, at those.
    for (const auto& k : cells) {
      const std::string& strategy = std::get<3>(k);
      int q = -1;
      try {
        const StrategyName s = parse_strategy(strategy);
        if (!s.exhaustive()) continue;
        q = s.param;
      } catch (const std::invalid_argument&) {
        continue;
      }
      if (q < e.exhaustive_preemptions) continue;
      complete.emplace(std::get<2>(k), false);
      auto it = stats.find(k);
      if (it == stats.end()) continue;
      const bool done = it->second.summary && it->second.summary->value("exhausted", false);
      complete[std::get<2>(k)] = complete[std::get<2>(k)] || done;
      searched[std::get<2>(k)].push_back(fmt::format("{} {} ({} schedules)", strategy, done ? "complete" : "incomplete",
                                                     it->second.trials));
    }
    std::vector<std::string> parts, missing;
    for (const auto& [t, ok] : complete) {
      if (!ok) missing.push_back(std::to_string(t));
      if (searched.count(t)) parts.push_back(fmt::format("{} threads: {}", t, fmt::join(searched[t], ", ")));
    }
    c.measured = parts.empty() ? "no dfs or dpor cell ran" : fmt::format("{}", fmt::join(parts, "; "));
    if (complete.empty()) missing.push_back("any");
    if (failures > 0) {
      c.status = "fail";
      c.measured = fmt::format("{} failures in {} trials; {}", failures, trials, c.measured);
    } else if (!missing.empty()) {
      c.status = all_done ? "fail" : "incomplete";
      c.measured += fmt::format("; not complete for {} threads", fmt::join(missing, ", "));
    }
    clauses.push_back(c);
  }
  std::string status = "pass";
  json cj = json::array();
  for (const auto& c : clauses) {
    if (c.status == "fail") status = "fail";
    else if (c.status == "incomplete" && status == "pass") status = "incomplete";
    cj.push_back({{"clause", c.name}, {"status", c.status}, {"measured", c.measured}});
  }
  return {{"status", status},
          {"expectation", e.source},
          {"describe", e.describe()},
          {"why", e.why},
          {"clauses", cj},
          {"cells", cells.size()},
          {"trials", trials},
          {"failures", failures}};
}

}  // namespace racelab::reports
