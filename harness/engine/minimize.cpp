#include "engine/minimize.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "engine/schedule_fit.h"

namespace racelab {

using nlohmann::json;

namespace {

struct Switch {
  int thread;
  int64_t k;
  int to;
};

std::vector<Switch> switches_of(const TrialResult& r) {
  std::vector<Switch> out;
  std::map<int, int64_t> requests;
  for (const auto& d : r.decisions) {
    int64_t k = requests[d.requester]++;
    int def = d.requester_runnable ? d.requester : (d.runnable.empty() ? d.thread : d.runnable.front());
    if (d.thread != def) out.push_back({d.requester, k, d.thread});
  }
  return out;
}

TrialSpec preempt_spec(const Schedule& s, const std::vector<Switch>& set) {
  TrialSpec t = s.replay_spec();
  json arr = json::array();
  for (const auto& w : set) arr.push_back(json::array({w.thread, w.k, w.to}));
  t.strategy = {{"kind", "preempt"}, {"set", arr}};
  t.strategy_name = s.strategy.empty() ? "minimized" : s.strategy;
  return t;
}

}  // namespace

MinimizeResult minimize(const Schedule& given, const TrialRunner& run, int64_t max_trials, bool any_program) {
  // Every replay below runs the schedule's own knobs: its program must still be the one it was made for.
  Schedule input = given;
  if (!check_schedule_fits(given, "schedule", given.workload, given.knobs, any_program).empty()) adopt_program(&input);
  MinimizeResult res;
  TrialResult base = run(input.replay_spec());
  res.trials = 1;
  if (base.outcome != input.outcome) {
    res.error = fmt::format("the schedule does not reproduce: recorded {}, replay gave {} ({})",
                            outcome_name(input.outcome), outcome_name(base.outcome), base.detail);
    return res;
  }
  const Outcome target = input.outcome;
  const int64_t max_pre = base.preemptions;
  std::vector<Switch> c = switches_of(base);
  res.preemptions_before = base.preemptions;
  res.switches_before = static_cast<int64_t>(c.size());

  std::map<std::vector<std::tuple<int, int64_t, int>>, bool> memo;
  auto test = [&](const std::vector<Switch>& set) {
    std::vector<std::tuple<int, int64_t, int>> key;
    for (const auto& w : set) key.emplace_back(w.thread, w.k, w.to);
    auto it = memo.find(key);
    if (it != memo.end()) return it->second;
    if (res.trials >= max_trials) return false;
    ++res.trials;
    TrialResult r = run(preempt_spec(input, set));
    bool fails = r.outcome == target && r.preemptions <= max_pre;
    memo[key] = fails;
    return fails;
  };

  // ddmin over one switch set; returns the 1-minimal survivor.
  auto ddmin = [&](std::vector<Switch> c) {
    if (test({})) return std::vector<Switch>{};
    size_t n = 2;
    while (c.size() >= 2) {
      size_t chunk = (c.size() + n - 1) / n;
      bool reduced = false;
      for (size_t start = 0; start < c.size() && !reduced; start += chunk) {
        std::vector<Switch> part(c.begin() + start, c.begin() + std::min(c.size(), start + chunk));
        if (test(part)) {
          c = part;
          n = 2;
          reduced = true;
        }
      }
      for (size_t start = 0; start < c.size() && !reduced && n > 2; start += chunk) {
        std::vector<Switch> rest(c.begin(), c.begin() + start);
        rest.insert(rest.end(), c.begin() + std::min(c.size(), start + chunk), c.end());
        if (test(rest)) {
          c = rest;
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
        }
      }
      if (!reduced) {
        if (n >= c.size()) break;
        n = std::min(n * 2, c.size());
      }
    }
    return c;
  };

  // Removing a switch shifts the k of later requests, so a survivor's own run
  // can have a different (smaller) switch set: shrink again until it stops
  // improving.
  TrialResult fin = base;
  for (int round = 0; round < 4; ++round) {
    std::vector<Switch> survivor = ddmin(c);
    TrialResult r = run(preempt_spec(input, survivor));
    ++res.trials;
    if (!(r.outcome == target && r.preemptions <= max_pre)) break;  // budget ran out mid-search
    bool better = r.preemptions < fin.preemptions || switches_of(r).size() < switches_of(fin).size();
    fin = r;
    c = switches_of(r);
    if (!better) break;
  }
  res.schedule = Schedule::from_trial(input.replay_spec(), fin);
  res.schedule.strategy = input.strategy;
  res.schedule.minimized_from_preemptions = input.points_known ? input.count_preemptions() : max_pre;
  res.preemptions_after = res.schedule.count_preemptions();
  res.switches_after = static_cast<int64_t>(c.size());
  res.ok = true;
  return res;
}

}  // namespace racelab
