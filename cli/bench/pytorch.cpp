// cli/bench/pytorch.cpp -- real torch beside the model (see bench.h): the
// direct leak on both, through the same engine.
//  - trial rate: trials per second of a holding cell (global_lock, random, 2
//    threads) on the model (a C++ worker) and on real torch (a Python worker
//    with torch.compile), and their ratio;
//  - trials to the first failure (mitigation none, 2 threads) under os,
//    random and pct:3 on both;
//  - the per-point cost of the Python points: a point placed as torch's are
//    (sys.monitoring -> engine), and a direct bridge call, each against a
//    plain Python call, as ratios (workload torch_point_overhead);
//  - where a script trial's time goes (racelab pyrun on the corpus's
//    three-drafter trainer): the worker's start (import torch), the script's
//    warm-up, and per trial the reset, the script's body -- of it, dynamo's
//    compiling, by torch's own timer -- and the trial's end.
// Skipped, saying why, without a Python with torch (--python CMD or
// $RACELAB_PYTHON).
#include "cli/bench/bench.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "cli/cell_flags.h"
#include "engine/python_host.h"

namespace racelab::cli::bench {

namespace {

CellSpec cell(const std::string& workload, const std::string& mitigation, const std::string& strategy, int64_t n) {
  CellSpec s;
  s.workload = workload;
  s.mitigation = mitigation;
  s.strategy = strategy;
  s.threads = 2;
  s.seed = 1;
  s.max_trials = n;
  s.trial_timeout_s = 240;
  return s;
}

// The script as the Python sees it: inside ci/in-torch-root, relative to the
// repository root, which is where bench runs from.
constexpr const char* kDrafterScript = "examples/pytorch/train_drafters.py";

json script_trial_split(const Options& o, const json& startup_ms) {
  if (!std::ifstream(kDrafterScript)) {
    return {{"skipped", std::string(kDrafterScript) + " is not here: run racelab bench from the repository root"}};
  }
  CellSpec s = cell(kPythonScriptWorkload, "none", "random", o.quick ? 2 : 6);
  s.threads = 1;  // the script starts its own threads, as in pyrun
  s.knobs = parse_knobs(pyrun_knob_flags({kDrafterScript}));
  CellRun r = run(s);
  // Per trial: the mean of each part over the trials that report it; the
  // worker's start and the warm-up come once, with the first trial.
  std::map<std::string, std::vector<double>> parts;
  int64_t steps = 0, hits = 0;
  for (const auto& rec : r.records) {
    steps += rec.steps;
    if (!rec.metrics.is_object()) continue;
    if (rec.metrics.contains("worker_ms") && rec.metrics["worker_ms"].is_object())
      for (const auto& [k, v] : rec.metrics["worker_ms"].items())
        if (v.is_number()) parts[k].push_back(v.get<double>());
    if (rec.metrics.contains("point_hits") && rec.metrics["point_hits"].is_object())
      for (const auto& [k, v] : rec.metrics["point_hits"].items())
        if (v.is_number_integer()) hits += v.get<int64_t>();
  }
  auto mean = [&](const std::string& k) -> json {
    const auto it = parts.find(k);
    if (it == parts.end() || it->second.empty()) return nullptr;
    double sum = 0;
    for (double v : it->second) sum += v;
    return sum / static_cast<double>(it->second.size());
  };
  json out = {{"script", kDrafterScript},
              {"strategy", "random"},
              {"trials", r.summary.trials},
              {"failures", r.summary.failures},
              {"wall_s", r.summary.wall_s},
              {"trials_per_s", r.summary.trials / std::max(1e-9, r.summary.wall_s)},
              {"once_ms", {{"startup", mean("startup").is_null() ? startup_ms : mean("startup")},
                           {"warm_up", mean("warm_up")}}},
              {"per_trial_ms",
               {{"reset", mean("reset")}, {"body", mean("body")}, {"compile", mean("compile")}, {"end", mean("end")}}},
              {"steps_per_trial", r.summary.trials > 0 ? steps / r.summary.trials : 0},
              {"point_hits_per_trial", r.summary.trials > 0 ? hits / r.summary.trials : 0}};
  const json body = out["per_trial_ms"]["body"], compile = out["per_trial_ms"]["compile"];
  if (body.is_number() && compile.is_number() && body.get<double>() > 0)
    out["compile_share_of_body"] = compile.get<double>() / body.get<double>();
  return out;
}

}  // namespace

json bench_pytorch(const Options& o) {
  json out;
  if (python_command().empty()) {
    out["skipped"] = "no Python with torch: give --python CMD or set RACELAB_PYTHON (ci/setup-torch makes one)";
    return out;
  }
  const int64_t rate_trials = o.quick ? 3 : 20, first_budget = o.quick ? 5 : 20;
  const std::pair<const char*, const char*> sides[] = {{"model", "direct_leak"}, {"pytorch", "torch_direct_leak"}};
  json rate;
  json startup_ms;  // the Python worker's start, reported with its first trial
  for (const auto& [side, workload] : sides) {
    CellRun first = run(cell(workload, "global_lock", "random", 1));  // starts the worker (and warms torch): not in the rate
    for (const auto& rec : first.records)
      if (rec.metrics.is_object() && rec.metrics.contains("worker_ms") && rec.metrics["worker_ms"].contains("startup"))
        startup_ms = rec.metrics["worker_ms"]["startup"];
    CellRun r = run(cell(workload, "global_lock", "random", rate_trials));
    for (const auto& rec : r.records)
      if (rec.metrics.is_object() && rec.metrics.contains("torch") && rec.metrics["torch"].is_string())
        out["torch"] = rec.metrics["torch"];
    rate[side] = {{"workload", workload},
                  {"trials", r.summary.trials},
                  {"failures", r.summary.failures},
                  {"trials_per_s", r.summary.trials / std::max(1e-9, r.summary.wall_s)}};
  }
  rate["model_over_pytorch"] =
      rate["model"]["trials_per_s"].get<double>() / std::max(1e-9, rate["pytorch"]["trials_per_s"].get<double>());
  out["trial_rate"] = rate;
  json first = json::array();
  for (const char* strategy : {"os", "random", "pct:3"}) {
    json row = {{"strategy", strategy}, {"budget", first_budget}};
    for (const auto& [side, workload] : sides) {
      CellSpec s = cell(workload, "none", strategy, first_budget);
      s.stop_at_first_failure = true;
      CellRun r = run(s);
      row[side] = r.summary.failures > 0 ? json(r.summary.trials) : json(nullptr);  // null: none within the budget
    }
    first.push_back(row);
  }
  out["trials_to_first_failure"] = first;
  // The cost of one Python point against a plain Python call, in the worker
  // (torch_point_overhead): controlled (random) and free running (os).
  json overhead = json::object();
  for (const char* strategy : {"random", "os"}) {
    CellSpec s = cell("torch_point_overhead", "none", strategy, 1);
    s.threads = 1;
    s.knobs = {{"calls", o.quick ? 500 : 5000}};
    CellRun r = run(s);
    if (!r.records.empty() && r.records.back().metrics.is_object() &&
        r.records.back().metrics.contains("point_over_plain")) {
      json m = r.records.back().metrics;
      overhead[strategy] = {{"plain_call_ns", m["plain_call_ns"]},     {"point_call_ns", m["point_call_ns"]},
                            {"bridge_point_ns", m["bridge_point_ns"]}, {"point_over_plain", m["point_over_plain"]},
                            {"bridge_over_plain", m["bridge_over_plain"]}, {"calls", m["calls"]},
                            {"placement", m["placement"]}};
    } else {
      overhead[strategy] = {{"problem", r.records.empty() ? std::string("no trial ran") : r.records.back().detail}};
    }
  }
  out["point_overhead"] = overhead;
  out["script_trial"] = script_trial_split(o, startup_ms);
  // One pyrun cell over 2 processes against one: the drafter script's fixed
  // variant (it holds), each trial the compile it must redo.
  if (std::ifstream(kDrafterScript))
    out["pyrun_jobs"] = jobs_speed_up(
        {"pyrun", "-n", o.quick ? "4" : "16", "-m", "lock_all", "-s", "random", "--no-progress", "--", kDrafterScript},
        2, 1);
  return out;
}

}  // namespace racelab::cli::bench
