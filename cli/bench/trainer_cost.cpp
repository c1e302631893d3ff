// cli/bench/trainer_cost.cpp -- the mitigations' cost on the real trainer, and worker scaling (see bench.h).
#include "cli/bench/bench.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace racelab::cli::bench {

json trainer_cell(const Options& o, const std::string& mitigation, int workers) {
  std::vector<double> rates, compile_s, rss;
  int64_t fallbacks = 0, calls = 0, errors = 0;
  for (int rep = 0; rep < (o.quick ? 1 : o.repeats); ++rep) {
    racelab::CellSpec s;
    s.workload = "trainer";
    s.mitigation = mitigation;
    s.strategy = "os";
    s.threads = workers;
    s.seed = 100 + rep;
    s.knobs = {{"steps", o.quick ? 2 : o.trainer_steps}, {"batch", 8}, {"d_model", 64}, {"heads", 4},
               {"seq_lens", {32, 48}}, {"block_sizes", {4}}, {"anchors", 6}, {"corpus_tokens", 16384}};
    s.max_trials = 1;
    s.supervised = false;
    reset_peak_rss();
    auto r = run(s);
    rss.push_back(peak_rss_mb());
    for (auto& t : r.records) {
      rates.push_back(t.metrics.value("steps_per_s", 0.0));
      compile_s.push_back(t.metrics.value("compile_seconds", 0.0));
      fallbacks += t.metrics.value("silent_fallbacks", int64_t{0});
      calls += t.metrics.value("attention_calls", int64_t{0});
      errors += t.outcome == "error" ? 1 : 0;
    }
  }
  double lo = *std::min_element(rates.begin(), rates.end()), hi = *std::max_element(rates.begin(), rates.end());
  double mid = median(rates);
  return {{"mitigation", mitigation},     {"workers", workers},          {"steps_per_s", mid},
          {"noise", mid > 0 ? (hi - lo) / mid : 0.0}, {"compile_s", median(compile_s)}, {"peak_rss_mb", median(rss)},
          {"fallbacks", fallbacks},       {"attention_calls", calls},    {"errored_trials", errors}};
}

json bench_mitigations(const Options& o) {
  json out = json::array();
  std::vector<int> ns = o.quick ? std::vector<int>{1} : std::vector<int>{1, 2, 4};
  std::vector<std::string> mitigations{"isolate_thread", "none", "lock_first_call", "compile_lock_only", "global_lock",
                                       "rw_lock", "precompile", "isolate_process", "disable_check"};
  if (o.quick) mitigations = {"isolate_thread", "global_lock"};
  trainer_cell(o, "isolate_thread", 1);  // warm-up, discarded: first-touch costs land here
  for (int n : ns) {
    double ideal = 0;
    for (const auto& m : mitigations) {
      json cell = trainer_cell(o, m, n);
      if (m == "isolate_thread") ideal = cell["steps_per_s"].get<double>();
      cell["ratio_to_ideal"] = ideal > 0 ? cell["steps_per_s"].get<double>() / ideal : NAN;
      std::fprintf(stderr, "  trainer %-18s N=%d  %.2f steps/s (x%.2f)\n", m.c_str(), n,
                   cell["steps_per_s"].get<double>(), cell["ratio_to_ideal"].get<double>());
      out.push_back(cell);
    }
  }
  return out;
}

json bench_scaling(const Options& o) {
  json out = json::array();
  const int cores = static_cast<int>(std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN)));
  double one = 0;
  for (int n = 1; n <= (o.quick ? 1 : std::max(2, cores)); ++n) {
    json cell = trainer_cell(o, "isolate_thread", n);
    if (n == 1) one = cell["steps_per_s"].get<double>();
    out.push_back({{"workers", n}, {"steps_per_s", cell["steps_per_s"]}, {"noise", cell["noise"]},
                   {"ratio_to_linear", one > 0 ? cell["steps_per_s"].get<double>() / (n * one) : NAN}});
  }
  return out;
}

}  // namespace racelab::cli::bench
