// reports/grounds.cpp -- see grounds.h.
#include "reports/grounds.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "engine/driver.h"

namespace racelab::reports {

using nlohmann::json;

namespace {

// The exhaustive cells (dfs:P, dpor:P) of one preemption bound.
struct DfsBound {
  int64_t schedules = 0;
  int64_t classes = 0;  // dpor cells' classes
  bool counted_classes = false;  // some cell counted classes (dpor); dfs: every schedule is its own
  bool complete = true;
  std::set<int> threads;
};

// "random (60), pct:3 (60)": trials per strategy, the portfolio's arms inside brackets.
std::string strategies_text(const json& cells) {
  std::map<std::string, int64_t> plain;
  std::map<std::string, std::map<std::string, int64_t>> portfolios;
  for (const auto& c : cells) {
    const std::string strategy = c["strategy"].get<std::string>();
    const json used = c.value("strategies_used", json::object());
    const bool portfolio = used.size() > 1 || (used.size() == 1 && used.begin().key() != strategy);
    if (!portfolio) {
      plain[strategy] += c["trials"].get<int64_t>();
      continue;
    }
    for (auto it = used.begin(); it != used.end(); ++it) portfolios[strategy][it.key()] += it.value().get<int64_t>();
  }
  std::vector<std::string> parts;
  for (const auto& [s, n] : plain) parts.push_back(fmt::format("{} ({})", s, n));
  for (const auto& [s, arms] : portfolios) {
    std::vector<std::string> a;
    for (const auto& [arm, n] : arms) a.push_back(fmt::format("{} {}", arm, n));
    parts.push_back(fmt::format("{} [{}]", s, fmt::join(a, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// PCT's guarantee per depth over every cell that ran PCT trials (directly or
// as a portfolio arm): the weakest per-trial floor with its n and k, and the
// probability that all those trials miss a bug of that depth.
json pct_bounds(const json& cells) {
  struct Acc {
    double floor = 1, log_escape = 0;
    int64_t trials = 0, k = 0;
    int n = 0;
  };
  std::map<int, Acc> by_depth;
  for (const auto& c : cells) {
    if (!c.contains("pct") || !c["pct"].is_object()) continue;
    const int d = c["pct"].value("d", 0);
    const double f = c.value("pct_floor", 0.0);
    if (d <= 0 || f <= 0) continue;
    const std::string arm = fmt::format("pct:{}", d);
    const json used = c.value("strategies_used", json::object());
    const int64_t t = used.contains(arm) ? used[arm].get<int64_t>()
                                         : (c["strategy"] == arm ? c["trials"].get<int64_t>() : 0);
    if (t <= 0) continue;
    Acc& a = by_depth[d];
    a.trials += t;
    a.log_escape += static_cast<double>(t) * std::log1p(-std::min(f, 1.0 - 1e-12));
    if (f < a.floor) {
      a.floor = f;
      a.k = c["pct"].value("k", int64_t{0});
      a.n = c["pct"].value("n", 0);
    }
  }
  json out = json::array();
  for (const auto& [d, a] : by_depth) {
    const double escape = std::exp(a.log_escape);
    out.push_back({{"d", d},
                   {"n", a.n},
                   {"k", a.k},
                   {"floor", a.floor},
                   {"trials", a.trials},
                   {"escape", escape},
                   {"text", fmt::format("PCT: a depth-{} bug is hit per trial with probability >= {:.3g} (n={}, k={} "
                                        "measured); all {} such trials miss it with probability <= {:.4g}",
                                        d, a.floor, a.n, a.k, a.trials, escape)}});
  }
  return out;
}

}  // namespace

json verdict_grounds(const std::string& verdict, const json& cells) {
  if (verdict == "fails") {
    int64_t fewest = -1, fewest_min = -1;
    for (const auto& c : cells) {
      const int64_t p = c.value("fewest_preemptions", int64_t{-1});
      if (p >= 0 && (fewest < 0 || p < fewest)) fewest = p;
      const int64_t m = c.value("minimized_preemptions", int64_t{-1});
      if (m >= 0 && (fewest_min < 0 || m < fewest_min)) fewest_min = m;
    }
    json g = {{"kind", "failing"}, {"fewest_preemptions", fewest}, {"minimized_preemptions", fewest_min}};
    if (fewest < 0)
      g["text"] = "failed only free-running (os): no schedule to count preemptions in";
    else
      g["text"] = fmt::format("fewest preemptions of a failing schedule: {}{}", fewest,
                              fewest_min >= 0 ? fmt::format(" (minimised: {})", fewest_min) : std::string());
    return g;
  }
  if (verdict != "holds") return {{"kind", "none"}, {"text", "no trials ran"}};

  int64_t trials = 0;
  std::map<int, DfsBound> dfs;  // preemption bound -> its cells
  for (const auto& c : cells) {
    trials += c["trials"].get<int64_t>();
    const std::string strategy = c["strategy"].get<std::string>();
    try {
      const StrategyName s = parse_strategy(strategy);
      if (!s.exhaustive()) continue;
      DfsBound& b = dfs[s.param];
      b.schedules += c["trials"].get<int64_t>();
      const int64_t classes = c.value("classes", int64_t{-1});
      b.classes += classes >= 0 ? classes : c["trials"].get<int64_t>();
      b.counted_classes = b.counted_classes || classes >= 0;
      b.complete = b.complete && c.value("exhausted", false);
      b.threads.insert(c["threads"].get<int>());
    } catch (const std::invalid_argument&) {
    }
  }
  const json pct = pct_bounds(cells);
  const std::string sampled = fmt::format("no failure in {} trials of strategies {}", trials, strategies_text(cells));
  std::string pct_text;
  for (const auto& b : pct) pct_text += "; " + b["text"].get<std::string>();
  // The strongest exhaustive claim: the highest bound searched to completion.
  for (auto it = dfs.rbegin(); it != dfs.rend(); ++it) {
    if (!it->second.complete) continue;
    const DfsBound& b = it->second;
    const std::string explored = b.counted_classes ? fmt::format("{} classes in {} schedules", b.classes, b.schedules)
                                                   : fmt::format("{} schedules", b.schedules);
    json g = {{"kind", "exhaustive"},
              {"preemptions", it->first},
              {"schedules", b.schedules},
              {"threads", b.threads},
              {"complete", true},
              {"pct", pct},
              {"text", fmt::format("exhaustive up to {} preemption{}, {}, complete ({} threads); {}{}", it->first,
                                   it->first == 1 ? "" : "s", explored, fmt::join(b.threads, ", "), sampled,
                                   pct_text)}};
    if (b.counted_classes) g["classes"] = b.classes;
    return g;
  }
  return {{"kind", "sampled"}, {"trials", trials}, {"pct", pct}, {"text", sampled + pct_text}};
}

}  // namespace racelab::reports
