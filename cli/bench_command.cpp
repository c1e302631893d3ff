// `racelab bench` -- whole-system benchmarks (issue 6), reported as ratios
// measured within one run, because this machine is shared and noisy.
//
// Sections (each can be chosen with --sections):
//   scheduling   cost of control: time per scheduling step of a ping-pong
//                workload, and controlled vs free-running trial time on the
//                direct-leak and stuck-true races;
//   reproduce    per race and strategy: failure probability per trial (95%
//                Wilson interval), median trials and wall time to a failure;
//   mitigations  the real trainer: steps/s for N workers under each mitigation
//                relative to the race-free ideal (isolate_thread), compile time,
//                peak RSS, and the silent-fallback cost of disable_check;
//   scaling      steps/s against N up to the number of cores, as a ratio to linear.
//
// Output: BENCH.json (schema racelab-bench/1) and BENCH.md. With --compare
// OLD.json every ratio is compared with the old run and flagged as a regression
// only when it moved by more than the noise measured across repeats.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/cell.h"
#include "cli/commands.h"
#include "racelab/exit_code.h"
#include "racelab/point.h"
#include "racelab/sync.h"
#include "racelab/workload.h"
#include "racelab/atomic_file.h"
#include "reports/stats.h"
#include <ATen/ATen.h>

#include "compile/attention_math.h"
#include "compile/capture_state.h"
#include "compile/compiled_function.h"
#include "trainer/util/threads.h"

namespace {

using nlohmann::json;

// ---- Measurement helpers ------------------------------------------------------

struct CellRun {
  racelab::CellSummary summary;
  std::vector<racelab::TrialRecord> records;
};

CellRun run(racelab::CellSpec spec) {
  CellRun out;
  spec.scenario = "bench";
  out.summary = racelab::run_cell(spec, [&](const racelab::TrialRecord& r) { out.records.push_back(r); });
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Peak RSS of this process since the last reset. Writing "5" to clear_refs
// resets the kernel's high-water mark, so each cell gets its own peak.
void reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
}
double peak_rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return NAN;
}

std::string fmt_num(double v, int digits = 2) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "n/a"; }

struct Options {
  bool quick = false;
  std::string out_dir = "bench-out";
  std::string compare;
  std::vector<std::string> sections{"scheduling", "reproduce", "fallback", "mitigations", "scaling"};
  int repeats = 3;
  int64_t reproduce_trials = 60;
  int trainer_steps = 150;
};

// ---- scheduling -------------------------------------------------------------

json bench_scheduling(const Options& o) {
  json out;
  const int64_t points = o.quick ? 200 : 2000;
  const int64_t trials = o.quick ? 2 : 5;
  auto per_step_ns = [&](const std::string& strategy) {
    racelab::CellSpec s;
    s.workload = "bench_ping_pong";
    s.mitigation = "none";
    s.strategy = strategy;
    s.threads = 2;
    s.knobs = {{"points", points}};
    s.max_trials = trials;
    s.supervised = false;
    auto r = run(s);
    double ms = 0;
    int64_t steps = 0;
    for (auto& t : r.records) ms += t.wall_ms, steps += t.steps;
    // Free running records no steps: divide by the points reached instead.
    int64_t denom = steps > 0 ? steps : points * 2 * static_cast<int64_t>(r.records.size());
    return json{{"strategy", strategy}, {"ns_per_step", ms * 1e6 / std::max<int64_t>(1, denom)},
                {"trial_ms", ms / std::max<size_t>(1, r.records.size())}};
  };
  json controlled = per_step_ns("random"), free = per_step_ns("os");
  out["ping_pong"] = {{"controlled", controlled}, {"free", free},
                      {"handoff_ns", controlled["ns_per_step"]},
                      {"controlled_over_free", controlled["trial_ms"].get<double>() /
                                                   std::max(1e-9, free["trial_ms"].get<double>())}};
  for (std::string wl : {"direct_leak", "stuck_true"}) {
    json row;
    for (std::string strategy : {"os", "random"}) {
      racelab::CellSpec s;
      s.workload = wl;
      s.mitigation = "global_lock";  // a race-free run: both strategies do the same work
      s.strategy = strategy;
      s.threads = 2;
      s.max_trials = o.quick ? 3 : 30;
      s.supervised = false;
      auto r = run(s);
      double ms = 0;
      for (auto& t : r.records) ms += t.wall_ms;
      row[strategy] = {{"trials_per_s", r.records.size() / std::max(1e-9, ms / 1e3)},
                       {"trial_ms", ms / std::max<size_t>(1, r.records.size())}};
    }
    row["controlled_over_free"] = row["random"]["trial_ms"].get<double>() / std::max(1e-9, row["os"]["trial_ms"].get<double>());
    out[wl] = row;
  }
  return out;
}

// ---- reproduce --------------------------------------------------------------

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

// ---- fallback: what a silent eager fallback costs per attention call ---------

// One attention call with its backward, as a training step makes it.
double time_calls(int64_t calls, const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& f,
                  const std::vector<at::Tensor>& inputs) {
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < calls; ++i) {
    auto out = f(inputs);
    if (!out.at(0).requires_grad()) throw std::runtime_error(fmt::format("bench fallback: call {} returned no grad", i));
    out.at(0).sum().backward();
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
}

json bench_fallback(const Options& o) {
  namespace tc = trainer::compile;
  const int64_t calls = o.quick ? 5 : 60;
  at::manual_seed(7);
  // (at:: factories ignore requires_grad in TensorOptions: set it on the tensor.)
  auto qkv = [] { return at::randn({8, 4, 48, 16}).set_requires_grad(true); };
  std::vector<at::Tensor> in{qkv(), qkv(), qkv(), at::ones({48, 48}, at::kBool).tril()};
  tc::CaptureRuntime rt;
  rt.set_error_on_nested_capture(false);  // disable_check, before the wrapper is made (it binds the check)
  tc::CompiledFunction fn("masked_attention", tc::masked_attention_fn, rt);
  time_calls(3, [&](const auto& x) { return fn(x); }, in);  // capture, then the executor's profiling runs
  // Alternate the paths in rounds and keep each path's median, so a burst of
  // load on this shared machine lands on both paths alike.
  const int rounds = o.quick ? 1 : 7;
  std::vector<double> compiled, fallback, eager_path;
  for (int r = 0; r < rounds; ++r) {
    compiled.push_back(time_calls(calls, [&](const auto& x) { return fn(x); }, in));
    rt.write_flag(true);  // another thread's capture holds the flag: every call falls back silently
    fallback.push_back(time_calls(calls, [&](const auto& x) { return fn(x); }, in));
    rt.write_flag(false);
    // Past the recompile limit: flex_attention's eager path compiles on every call.
    eager_path.push_back(time_calls(calls, [&](const auto& x) {
      return tc::run_eager_path(rt, "masked_attention", tc::masked_attention_fn, x);
    }, in));
  }
  auto spread = [](const std::vector<double>& v) {
    return (*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) / median(v);
  };
  double compiled_us = median(compiled), fallback_us = median(fallback), eager_path_us = median(eager_path);
  int64_t silent = fn.stats().silent_fallbacks;
  return {{"calls", calls},
          {"rounds", rounds},
          {"noise", std::max(spread(compiled), spread(fallback))},
          {"compiled_us", compiled_us},
          {"silent_fallback_us", fallback_us},
          {"silent_fallbacks_counted", silent},
          {"fallback_over_compiled", fallback_us / compiled_us},
          {"eager_path_us", eager_path_us},
          {"eager_path_over_compiled", eager_path_us / compiled_us}};
}

// ---- mitigations and scaling (the real trainer) ------------------------------

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
      if (m == "isolate_thread") ideal = cell["steps_per_s"];
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
    if (n == 1) one = cell["steps_per_s"];
    out.push_back({{"workers", n}, {"steps_per_s", cell["steps_per_s"]}, {"noise", cell["noise"]},
                   {"ratio_to_linear", one > 0 ? cell["steps_per_s"].get<double>() / (n * one) : NAN}});
  }
  return out;
}

// ---- output -----------------------------------------------------------------

json machine() {
  struct utsname u {};
  uname(&u);
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model;
  while (std::getline(cpu, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return {{"cpu", model}, {"cores", sysconf(_SC_NPROCESSORS_ONLN)}, {"kernel", u.release},
          {"racelab_version", RACELAB_VERSION}, {"points", RACELAB_POINTS ? "on" : "compiled out"}};
}

std::string markdown(const json& b) {
  std::ostringstream md;
  md << "# racelab bench\n\nMachine: " << b["machine"]["cpu"].get<std::string>() << ", "
     << b["machine"]["cores"].get<long>() << " cores. All figures are ratios or rates from one run.\n\n";
  if (b.contains("scheduling")) {
    auto& s = b["scheduling"];
    md << "## Controlled scheduling\n\n| measure | value |\n|---|---|\n"
       << "| time per scheduling step (ping-pong, 2 threads) | " << fmt_num(s["ping_pong"]["handoff_ns"], 0) << " ns |\n"
       << "| ping-pong trial (nothing but points), controlled / free | " << fmt_num(s["ping_pong"]["controlled_over_free"]) << "x |\n";
    for (std::string wl : {"direct_leak", "stuck_true"})
      md << "| " << wl << ": trials/s controlled / free | " << fmt_num(s[wl]["random"]["trials_per_s"], 0) << " / "
         << fmt_num(s[wl]["os"]["trials_per_s"], 0) << " (controlled/free time " << fmt_num(s[wl]["controlled_over_free"])
         << "x) |\n";
    md << "\n";
  }
  if (b.contains("reproduce")) {
    md << "## Time to reproduce (mitigation none, 2 threads)\n\n"
          "| race | strategy | failed / trials | p (95% CI) | median trials to failure | median ms to failure |\n"
          "|---|---|---|---|---|---|\n";
    for (auto& r : b["reproduce"])
      md << "| " << r["race"].get<std::string>() << " | " << r["strategy"].get<std::string>() << " | "
         << r["failures"].get<long>() << " / " << r["trials"].get<long>() << " | " << fmt_num(r["p"]) << " ("
         << fmt_num(r["p_low"]) << "-" << fmt_num(r["p_high"]) << ") | "
         << (r["median_trials_to_failure"].is_null() ? "> " + std::to_string(r["trials"].get<long>())
                                                     : fmt_num(r["median_trials_to_failure"], 1))
         << " | " << (r["median_ms_to_failure"].is_null() ? "-" : fmt_num(r["median_ms_to_failure"], 1)) << " |\n";
    md << "\n";
  }
  if (b.contains("fallback")) {
    auto& f = b["fallback"];
    md << "## Silent-fallback cost per attention call (forward + backward)\n\n| path | us per call | ratio to compiled |\n|---|---|---|\n"
       << "| compiled (cache hit, graph executor) | " << fmt_num(f["compiled_us"], 1) << " | 1.00 |\n"
       << "| silent eager fallback (disable_check, flag set by another capture) | " << fmt_num(f["silent_fallback_us"], 1)
       << " | " << fmt_num(f["fallback_over_compiled"]) << " |\n"
       << "| eager path after the recompile limit (compiles every call) | " << fmt_num(f["eager_path_us"], 1) << " | "
       << fmt_num(f["eager_path_over_compiled"]) << " |\n\n"
       << "Median of " << f["rounds"].get<int>() << " alternating rounds of " << f["calls"].get<long>()
       << " calls; spread across rounds " << fmt_num(100 * f["noise"].get<double>(), 0) << "%.\n\n";
  }
  if (b.contains("mitigations")) {
    md << "## Mitigation cost on the real trainer (ideal = isolate_thread)\n\n"
          "| mitigation | N | steps/s | ratio to ideal | noise | compile s | peak RSS MB | fallbacks / calls | errored |\n"
          "|---|---|---|---|---|---|---|---|---|\n";
    for (auto& r : b["mitigations"])
      md << "| " << r["mitigation"].get<std::string>() << " | " << r["workers"].get<int>() << " | "
         << fmt_num(r["steps_per_s"]) << " | " << fmt_num(r["ratio_to_ideal"]) << " | " << fmt_num(r["noise"]) << " | "
         << fmt_num(r["compile_s"], 3) << " | " << fmt_num(r["peak_rss_mb"], 0) << " | " << r["fallbacks"].get<long>()
         << " / " << r["attention_calls"].get<long>() << " | " << r["errored_trials"].get<long>() << " |\n";
    md << "\n";
  }
  if (b.contains("scaling")) {
    md << "## Worker scaling (isolate_thread)\n\n| N | steps/s | ratio to linear |\n|---|---|---|\n";
    for (auto& r : b["scaling"])
      md << "| " << r["workers"].get<int>() << " | " << fmt_num(r["steps_per_s"]) << " | "
         << fmt_num(r["ratio_to_linear"]) << " |\n";
    md << "\n";
  }
  if (b.contains("comparison")) {
    md << "## Compared with " << b["comparison"]["old"].get<std::string>() << "\n\n| metric | old | new | change | noise | verdict |\n|---|---|---|---|---|---|\n";
    for (auto& r : b["comparison"]["rows"])
      md << "| " << r["metric"].get<std::string>() << " | " << fmt_num(r["old"]) << " | " << fmt_num(r["new"]) << " | "
         << fmt_num(100 * r["change"].get<double>(), 1) << "% | " << fmt_num(100 * r["noise"].get<double>(), 1) << "% | "
         << r["verdict"].get<std::string>() << " |\n";
  }
  return md.str();
}

// Higher-is-better metrics with the noise measured for them.
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
  if (b.contains("scheduling"))
    for (std::string wl : {"direct_leak", "stuck_true"})
      if (b["scheduling"].contains(wl))
        m["controlled_trials_per_s[" + wl + "]"] = {b["scheduling"][wl]["random"]["trials_per_s"].get<double>(), 0.1};
  return m;
}

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

}  // namespace

namespace racelab::cli {

int bench_command(int argc, char** argv) {
  Options o;
  CLI::App app{"Whole-system benchmarks as ratios within one run: scheduling cost, time to reproduce, "
               "mitigation cost on the real trainer, worker scaling"};
  app.add_flag("--quick", o.quick, "Minimal iterations (the CI smoke pass); figures are not meaningful");
  app.add_option("--out", o.out_dir, "Directory for BENCH.json and BENCH.md");
  app.add_option("--sections", o.sections, "Subset of: scheduling reproduce fallback mitigations scaling")
      ->check(CLI::IsMember({"scheduling", "reproduce", "fallback", "mitigations", "scaling"}));
  app.add_option("--repeats", o.repeats, "Repeats per trainer cell (noise estimate)")->check(CLI::Range(1, 20));
  app.add_option("--trials", o.reproduce_trials, "Trial budget per (race, strategy) cell")->check(CLI::Range(1, 100000));
  app.add_option("--trainer-steps", o.trainer_steps, "Steps per worker in each trainer cell")->check(CLI::Range(1, 10000));
  app.add_option("--compare", o.compare, "An earlier BENCH.json: flag regressions beyond the measured noise")
      ->check(CLI::ExistingFile);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? racelab::kExitOk : racelab::kExitUsage;
  }
  json old_run;
  if (!o.compare.empty()) {
    std::ifstream f(o.compare);
    old_run = json::parse(f, nullptr, false);
    if (old_run.is_discarded() || old_run.value("schema", "") != "racelab-bench/1") {
      std::fprintf(stderr, "racelab bench: %s: field 'schema': expected \"racelab-bench/1\" (a BENCH.json)\n",
                   o.compare.c_str());
      return racelab::kExitBadInput;
    }
  }
  trainer::use_single_intra_op_thread();  // as the workloads do: one intra-op thread, OpenBLAS too
  if (!o.compare.empty() && old_run.value("quick", false) != o.quick) {
    std::fprintf(stderr, "racelab bench: %s: field 'quick': the old run %s --quick, this one %s: compare like with like\n",
                 o.compare.c_str(), old_run.value("quick", false) ? "used" : "did not use", o.quick ? "does" : "does not");
    return racelab::kExitUsage;
  }
  json b = {{"schema", "racelab-bench/1"}, {"machine", machine()}, {"quick", o.quick}};
  auto t0 = std::chrono::steady_clock::now();
  auto want = [&](const char* s) { return std::find(o.sections.begin(), o.sections.end(), s) != o.sections.end(); };
  if (want("scheduling")) std::fprintf(stderr, "bench: scheduling\n"), b["scheduling"] = bench_scheduling(o);
  if (want("reproduce")) std::fprintf(stderr, "bench: reproduce\n"), b["reproduce"] = bench_reproduce(o);
  if (want("fallback")) std::fprintf(stderr, "bench: fallback\n"), b["fallback"] = bench_fallback(o);
  if (want("mitigations")) std::fprintf(stderr, "bench: mitigations\n"), b["mitigations"] = bench_mitigations(o);
  if (want("scaling")) std::fprintf(stderr, "bench: scaling\n"), b["scaling"] = bench_scaling(o);
  b["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.compare.empty()) b["comparison"] = compare_runs(old_run, b, o.compare);

  std::string md = markdown(b);
  std::filesystem::create_directories(o.out_dir);
  racelab::write_file_atomically(o.out_dir + "/BENCH.json", b.dump(2) + "\n");
  racelab::write_file_atomically(o.out_dir + "/BENCH.md", md);
  std::fputs(md.c_str(), stdout);
  std::fprintf(stderr, "bench: wrote %s/BENCH.json and BENCH.md (%.0f s)\n", o.out_dir.c_str(), b["wall_s"].get<double>());
  if (b.contains("comparison"))
    for (auto& r : b["comparison"]["rows"])
      if (r["verdict"] == "REGRESSION") return racelab::kExitExpectationFailed;
  return racelab::kExitOk;
}

}  // namespace racelab::cli
