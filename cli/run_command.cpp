// `racelab run` and `racelab reproduce`: trials of one workload under a strategy.
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/cli_util.h"
#include "engine/cell.h"
#include "racelab/jsonl.h"
#include "engine/minimize.h"
#include "engine/schedule.h"
#include "engine/supervisor.h"
#include "cli/commands.h"
#include "racelab/exit_code.h"

namespace racelab {
namespace {

struct CellFlags {
  CellSpec spec;
  std::vector<std::string> knobs;
  std::string results;
  bool in_process = false;
  bool quiet = false;

  void add(CLI::App& app, const std::string& default_strategy, int64_t default_budget) {
    spec.strategy = default_strategy;
    spec.max_trials = default_budget;
    app.add_option("workload", spec.workload, "Registered workload (a compile-layer micro workload, ...)")->required();
    app.add_option("--scenario", spec.scenario, "Scenario name recorded in results and schedules");
    app.add_option("-m,--mitigation", spec.mitigation, "Mitigation (default: the workload's first)");
    app.add_option("-t,--threads", spec.threads, "Worker threads the workload starts")->check(CLI::Range(1, 64))
        ->capture_default_str();
    app.add_option("-s,--strategy", spec.strategy,
                   "os | os+jitter[:P] | random | pct:D | dfs:P | replay:FILE|STRING")->capture_default_str();
    app.add_option("--seed", spec.seed, "Cell seed (trial seeds derive from it)")->capture_default_str();
    app.add_option("-n,--budget", spec.max_trials, "Maximum trials")->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--max-seconds", spec.max_seconds, "Stop after this many seconds (0: no limit)");
    app.add_option("-k,--knob", knobs, "Workload knob NAME=VALUE (repeatable)");
    app.add_option("--results", results, "Append every trial to this JSONL file");
    app.add_option("--timeout", spec.trial_timeout_s, "Seconds before a trial counts as hung")->capture_default_str();
    app.add_flag("--in-process", in_process, "Run trials in this process (no crash isolation)");
    app.add_flag("-q,--quiet", quiet, "Print only the summary");
  }
};

void print_failure(const TrialRecord& r) {
  std::printf("trial %lld: %s: %s\n", static_cast<long long>(r.trial), r.outcome.c_str(), r.detail.c_str());
  if (!r.compact.empty()) std::printf("  replay: racelab replay %s\n", r.compact.c_str());
  if (!r.schedule_file.empty()) std::printf("  schedule: %s\n", r.schedule_file.c_str());
  std::fflush(stdout);
}

// Runs the cell; returns an exit code, or -1 to let the caller continue.
int run_flags(CellFlags& f, CellSummary* sum, bool print_failures) {
  f.spec.supervised = !f.in_process;
  try {
    f.spec.knobs = cli::parse_knobs(f.knobs);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitUsage;
  }
  std::unique_ptr<JsonlWriter> out;
  try {
    if (!f.results.empty()) out = std::make_unique<JsonlWriter>(f.results);
    std::set<std::string> shown;
    *sum = run_cell(f.spec, [&](const TrialRecord& r) {
      if (out) out->write(r.to_json());
      if (print_failures && !f.quiet && r.outcome != "holds" && shown.insert(r.outcome).second) print_failure(r);
    });
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitUsage;
  }
  return -1;
}

}  // namespace

namespace cli {

int run_command(int argc, char** argv) {
  CLI::App app{"Run trials of a workload under a strategy and classify each (design §2.4)", argv[0]};
  CellFlags f;
  f.add(app, "random", 100);
  app.add_option("--schedule-dir", f.spec.schedule_dir, "Write the first failing schedule of each outcome class here");
  app.add_flag("--stop-at-first-failure", f.spec.stop_at_first_failure, "Stop at the first trial that does not hold");
  CLI11_PARSE(app, argc, argv);
  CellSummary sum;
  int rc = run_flags(f, &sum, true);
  if (rc >= 0) return rc;
  cli::print_summary(f.spec, sum);
  return sum.failures > 0 ? kExitExpectationFailed : kExitOk;
}

int reproduce_command(int argc, char** argv) {
  CLI::App app{"Search for a failing schedule (stop at the first failure), save it, minimise it and print its "
               "one-line form",
               argv[0]};
  CellFlags f;
  f.add(app, "pct:2", 1000);
  std::string out_path;
  bool no_minimize = false;
  int64_t min_budget = 400;
  app.add_option("-o,--out", out_path, "Schedule file (default: WORKLOAD.schedule.json; minimised: *.min.json)");
  app.add_flag("--no-minimize", no_minimize, "Save the failing schedule as found");
  app.add_option("--minimize-budget", min_budget, "Trials the minimiser may run")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (out_path.empty()) out_path = f.spec.workload + ".schedule.json";
  std::string dir = out_path.find('/') == std::string::npos ? "." : out_path.substr(0, out_path.rfind('/'));
  f.spec.stop_at_first_failure = true;
  f.spec.schedule_dir = dir;
  CellSummary sum;
  int rc = run_flags(f, &sum, true);
  if (rc >= 0) return rc;
  cli::print_summary(f.spec, sum);
  if (sum.failures == 0) {
    std::printf("not reproduced in %lld trials\n", static_cast<long long>(sum.trials));
    return kExitOk;
  }
  Schedule found;
  try {
    found = load_schedule(sum.first_failure_schedule);
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitInternal;
  }
  std::remove(sum.first_failure_schedule.c_str());
  save_schedule(found, out_path);
  std::printf("schedule: %s (%s, %lld preemptions)\n", out_path.c_str(), outcome_name(found.outcome),
              static_cast<long long>(found.count_preemptions()));
  if (found.decisions.empty()) {
    std::printf("found by a free-running strategy: not replayable; search with random, pct:D or dfs:P\n");
    return kExitExpectationFailed;
  }
  Schedule final_schedule = found;
  if (!no_minimize) {
    MinimizeResult m = minimize(found, cli::make_runner(f.in_process, f.spec.trial_timeout_s), min_budget);
    if (!m.ok) {
      std::printf("minimise: %s\n", m.error.c_str());
    } else {
      std::string min_path = out_path.size() > 5 && out_path.substr(out_path.size() - 5) == ".json"
                                 ? out_path.substr(0, out_path.size() - 5) + ".min.json"
                                 : out_path + ".min";
      save_schedule(m.schedule, min_path);
      std::printf("minimised: %s: preemptions %lld -> %lld (context switches %lld -> %lld, %lld trials)\n",
                  min_path.c_str(), static_cast<long long>(m.preemptions_before),
                  static_cast<long long>(m.preemptions_after), static_cast<long long>(m.switches_before),
                  static_cast<long long>(m.switches_after), static_cast<long long>(m.trials));
      final_schedule = m.schedule;
    }
  }
  std::printf("replay: racelab replay %s\n", to_compact(final_schedule).c_str());
  return kExitExpectationFailed;
}

int worker_command(int, char**) { return worker_main(); }

}  // namespace cli
}  // namespace racelab
