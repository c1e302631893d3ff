// cli/bench/compare.cpp -- --compare: what moved beyond the noise since an earlier run (see bench.h).
#include "cli/bench/bench.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace racelab::cli::bench {

namespace {

// Every figure worth comparing across runs: its value and its measured noise.
std::map<std::string, std::pair<double, double>> comparable(const json& b) {
  std::map<std::string, std::pair<double, double>> m;
  if (b.contains("mitigations"))
    for (auto& r : b["mitigations"])
      m[fmt::format("steps_per_s[{},N={}]", r["mitigation"].get<std::string>(), r["workers"].get<int>())] = {
          r["steps_per_s"].get<double>(), r["noise"].get<double>()};
  if (b.contains("scaling"))
    for (auto& r : b["scaling"])
      m[fmt::format("scaling_ratio[N={}]", r["workers"].get<int>())] = {r["ratio_to_linear"].get<double>(),
                                                                       r["noise"].get<double>()};
  if (b.contains("scheduling") && b["scheduling"].contains("step")) {
    const json& st = b["scheduling"]["step"];
    for (std::string kind : {"keep", "switch"})
      m["steps_per_s[" + kind + "]"] = {1e9 / std::max(1e-9, st[kind + "_ns"].get<double>()),
                                        st[kind + "_noise"].get<double>()};
  }
  if (b.contains("scheduling"))
    for (std::string wl : {"direct_leak", "stuck_true"})
      if (b["scheduling"].contains(wl))
        m["controlled_trials_per_s[" + wl + "]"] = {b["scheduling"][wl]["random"]["trials_per_s"].get<double>(), 0.1};
  return m;
}

}  // namespace

json compare_runs(const json& old_run, const json& new_run, const std::string& old_path) {
  json rows = json::array();
  auto olds = comparable(old_run), news = comparable(new_run);
  for (auto& [metric, nv] : news) {
    auto it = olds.find(metric);
    if (it == olds.end()) continue;
    double ov = it->second.first, change = ov != 0 ? (nv.first - ov) / ov : 0;
    // Flag only what moved beyond the noise both runs measured (at least 10%).
    double noise = std::max({0.10, 2 * nv.second, 2 * it->second.second});
    std::string verdict = change < -noise ? "REGRESSION" : change > noise ? "improved" : "within noise";
    rows.push_back({{"metric", metric}, {"old", ov}, {"new", nv.first}, {"change", change}, {"noise", noise},
                    {"verdict", verdict}});
  }
  return {{"old", old_path}, {"rows", rows}};
}

}  // namespace racelab::cli::bench
