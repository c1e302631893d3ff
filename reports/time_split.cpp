#include "reports/time_split.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace racelab::reports {

using nlohmann::json;

json time_split(const json& report) {
  json rows = json::array();
  json ratios = json::array();
  int64_t all_trials = 0;
  double all_s = 0;
  for (const auto& s : report.value("scenarios", json::array())) {
    int64_t trials = 0;
    double seconds = 0;
    // (threads, strategy, seed) -> {trials, seconds} of each isolation.
    using Key = std::tuple<int, std::string, uint64_t>;
    std::map<Key, std::pair<int64_t, double>> process, thread;
    for (const auto& c : s.value("cells", json::array())) {
      const int64_t n = c.value("trials", int64_t{0});
      const double cell_s = static_cast<double>(n) * c.value("trial_ms", 0.0) / 1000.0;
      trials += n;
      seconds += cell_s;
      const std::string m = c.value("mitigation", "");
      if (n > 0 && (m == "isolate_process" || m == "isolate_thread"))
        (m == "isolate_process" ? process : thread)[Key{c.value("threads", 0), c.value("strategy", ""),
                                                        c.value("seed", uint64_t{0})}] = {n, cell_s};
    }
    rows.push_back({{"name", s.value("name", "")},
                    {"trials", trials},
                    {"trial_s", seconds},
                    {"per_trial_ms", trials ? 1000.0 * seconds / static_cast<double>(trials) : 0.0}});
    all_trials += trials;
    all_s += seconds;
    int64_t cells = 0, pn = 0, tn = 0;
    double ps = 0, tsec = 0;
    for (const auto& [k, p] : process) {
      auto it = thread.find(k);
      if (it == thread.end()) continue;
      ++cells;
      pn += p.first, ps += p.second;
      tn += it->second.first, tsec += it->second.second;
    }
    // Only the trainer runs isolate_process as processes; the compile layer's
    // micro workloads model it within one process (compile/mitigation/).
    if (s.value("workload", "") == "trainer" && cells > 0 && pn > 0 && tn > 0 && tsec > 0) {
      const double process_ms = 1000.0 * ps / static_cast<double>(pn), thread_ms = 1000.0 * tsec / static_cast<double>(tn);
      ratios.push_back({{"scenario", s.value("name", "")},
                        {"cells", cells},
                        {"process_ms", process_ms},
                        {"thread_ms", thread_ms},
                        {"ratio", process_ms / thread_ms}});
    }
  }
  for (auto& r : rows) r["share"] = all_s > 0 ? r["trial_s"].get<double>() / all_s : 0.0;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const json& a, const json& b) { return a["trial_s"].get<double>() > b["trial_s"].get<double>(); });
  json out = {{"scenarios", rows},
              {"trials", all_trials},
              {"trial_s", all_s},
              {"isolate_process_over_thread", ratios}};
  const json& c = report.value("campaign", json::object());
  out["wall_s"] = c.value("wall_s", 0.0);
  if (c.contains("idle_share")) out["idle_share"] = c["idle_share"];
  if (c.contains("jobs")) out["jobs"] = c["jobs"];
  return out;
}

std::string time_split_markdown(const json& split) {
  std::string md = "## racelab compare: where the time goes\n\n";
  md += fmt::format("{} trials, {:.1f} s of trial time, {:.1f} s wall", split.value("trials", int64_t{0}),
                    split.value("trial_s", 0.0), split.value("wall_s", 0.0));
  if (split.contains("idle_share"))
    md += fmt::format(" on {} shards; the cores were idle {:.1f}% of the time",
                      split.value("jobs", 0), 100 * split["idle_share"].get<double>());
  md += ".\n\n| scenario | trials | trial time | share | per trial |\n|---|---|---|---|---|\n";
  for (const auto& r : split.value("scenarios", json::array()))
    md += fmt::format("| {} | {} | {:.1f} s | {:.0f}% | {:.1f} ms |\n", r["name"].get<std::string>(),
                      r["trials"].get<int64_t>(), r["trial_s"].get<double>(), 100 * r["share"].get<double>(),
                      r["per_trial_ms"].get<double>());
  const json& ratios = split.value("isolate_process_over_thread", json::array());
  if (!ratios.empty()) {
    md += "\n| scenario | cells | isolate_process per trial | isolate_thread per trial | ratio |\n|---|---|---|---|---|\n";
    for (const auto& r : ratios)
      md += fmt::format("| {} | {} | {:.0f} ms | {:.0f} ms | {:.2f}x |\n", r["scenario"].get<std::string>(),
                        r["cells"].get<int64_t>(), r["process_ms"].get<double>(), r["thread_ms"].get<double>(),
                        r["ratio"].get<double>());
  }
  return md + "\n";
}

}  // namespace racelab::reports
