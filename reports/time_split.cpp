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
    // The cells' wall time (cells that have it) and their trials' time: what
    // is left is the time between the trials -- the spec and the result on
    // the worker's pipe, the record, the driver -- which no trial counts.
    double cells_wall_s = 0, timed_trial_s = 0;
    int64_t timed_trials = 0;
    // Summed over the cells whose trials report them (compile-layer workloads):
    // CPU ms by phase, the trials' time inside the body, and their count.
    std::map<std::string, double> cpu;
    double body_ms = 0, phased_wall_ms = 0;
    int64_t phased = 0;
    // (threads, strategy, seed) -> {trials, seconds} of each isolation.
    using Key = std::tuple<int, std::string, uint64_t>;
    std::map<Key, std::pair<int64_t, double>> process, thread;
    for (const auto& c : s.value("cells", json::array())) {
      const int64_t n = c.value("trials", int64_t{0});
      const double cell_s = static_cast<double>(n) * c.value("trial_ms", 0.0) / 1000.0;
      trials += n;
      seconds += cell_s;
      if (n > 0 && c.contains("wall_s")) {
        cells_wall_s += c["wall_s"].get<double>();
        timed_trial_s += cell_s;
        timed_trials += n;
      }
      if (n > 0 && c.contains("cpu_ms") && c.contains("body_ms")) {
        for (const auto& [phase, ms] : c["cpu_ms"].items()) cpu[phase] += static_cast<double>(n) * ms.get<double>();
        body_ms += static_cast<double>(n) * c["body_ms"].get<double>();
        phased_wall_ms += 1000.0 * cell_s;
        phased += n;
      }
      const std::string m = c.value("mitigation", "");
      if (n > 0 && (m == "isolate_process" || m == "isolate_thread"))
        (m == "isolate_process" ? process : thread)[Key{c.value("threads", 0), c.value("strategy", ""),
                                                        c.value("seed", uint64_t{0})}] = {n, cell_s};
    }
    rows.push_back({{"name", s.value("name", "")},
                    {"trials", trials},
                    {"trial_s", seconds},
                    {"per_trial_ms", trials ? 1000.0 * seconds / static_cast<double>(trials) : 0.0}});
    if (timed_trials > 0)
      rows.back()["between_trials_ms"] =
          std::max(0.0, 1000.0 * (cells_wall_s - timed_trial_s) / static_cast<double>(timed_trials));
    if (phased > 0) {
      // Per trial: each phase's CPU ms, the body's other CPU (scheduler,
      // threads, locks: the trial's CPU less its phases), the body's wall
      // time, and the harness's share of the trial (spec, classification,
      // records, the worker's pipes: trial time less the body's).
      const double k = 1.0 / static_cast<double>(phased);
      json split = json::object();
      double phases = 0;
      for (const auto& [phase, ms] : cpu)
        if (phase != "trial") split[phase] = ms * k, phases += ms * k;
      if (cpu.count("trial")) {
        split["trial"] = cpu["trial"] * k;
        split["other"] = std::max(0.0, cpu["trial"] * k - phases);
      }
      rows.back()["cpu_ms"] = split;
      rows.back()["body_ms"] = body_ms * k;
      rows.back()["harness_ms"] = std::max(0.0, (phased_wall_ms - body_ms) * k);
    }
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
  md += ".\n\n`between trials`: per trial, its cell's wall time that no trial counts (the spec and the result "
        "on the worker's pipe, the record, the strategy's driver).\n\n"
        "| scenario | trials | trial time | share | per trial | between trials |\n|---|---|---|---|---|---|\n";
  for (const auto& r : split.value("scenarios", json::array()))
    md += fmt::format("| {} | {} | {:.1f} s | {:.0f}% | {:.1f} ms | {} |\n", r["name"].get<std::string>(),
                      r["trials"].get<int64_t>(), r["trial_s"].get<double>(), 100 * r["share"].get<double>(),
                      r["per_trial_ms"].get<double>(),
                      r.contains("between_trials_ms") ? fmt::format("{:.2f} ms", r["between_trials_ms"].get<double>())
                                                      : std::string("-"));
  // Where a compile-layer trial's time goes (compile/trial_phases.h).
  bool phases = false;
  for (const auto& r : split.value("scenarios", json::array())) phases = phases || r.contains("cpu_ms");
  if (phases) {
    md += "\nPer trial, compile-layer scenarios: CPU ms by phase (this thread's CPU time, which a loaded "
          "machine does not move), the trial's CPU in all (`trial`: every thread of the worker; `other`: "
          "scheduler, threads and locks), its wall time inside the body and the harness's share of the "
          "trial time (spec, classification, records, pipes).\n\n"
          "| scenario | inputs | trace | build | first run | run | oracle | other | CPU in all | body wall | "
          "harness |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& r : split.value("scenarios", json::array())) {
      if (!r.contains("cpu_ms")) continue;
      const json& c = r["cpu_ms"];
      auto ms = [&](const char* k) { return fmt::format("{:.2f}", c.value(k, 0.0)); };
      md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1f} | {:.1f} |\n",
                        r["name"].get<std::string>(), ms("inputs"), ms("trace"), ms("build"), ms("first_run"),
                        ms("run"), ms("oracle"), ms("other"), ms("trial"), r.value("body_ms", 0.0),
                        r.value("harness_ms", 0.0));
    }
  }
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
