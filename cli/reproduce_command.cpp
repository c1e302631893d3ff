// `racelab reproduce`: search for a failing schedule, save it, minimise it and
// print the one-line form that replays it.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "campaign/interrupt.h"
#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/minimize.h"
#include "engine/schedule.h"
#include "racelab/exit_code.h"

namespace racelab::cli {

int reproduce_command(int argc, char** argv) {
  CLI::App app{"Search for a failing schedule (stop at the first failure), save it, minimise it and print its "
               "one-line form",
               argv[0]};
  CellFlags f;
  f.add(app, "auto", 1000);
  add_parallel_flags(app, f, argc, argv);
  std::string out_path;
  bool no_minimize = false;
  int64_t min_budget = 400;
  app.add_option("-o,--out", out_path, "Schedule file (default: WORKLOAD.schedule.json; minimised: *.min.json)");
  app.add_flag("--no-minimize", no_minimize, "Save the failing schedule as found");
  app.add_option("--minimize-budget", min_budget, "Trials the minimiser may run")
      ->check(positive_integer())
      ->capture_default_str();
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  if (out_path.empty()) {
    // The program's file name for --exec: what a person looks for.
    std::string base = f.positional.at(0);
    if (base.find('/') != std::string::npos) base = base.substr(base.rfind('/') + 1);
    out_path = base + ".schedule.json";
  }
  if (int rc = require_output(app.get_name(), "--out", out_path, Output::kFileAnyFolder); rc != kGoOn) return rc;
  std::string dir = out_path.find('/') == std::string::npos ? "." : out_path.substr(0, out_path.rfind('/'));
  f.spec.stop_at_first_failure = true;
  f.spec.schedule_dir = dir;
  f.show_schedule_files = false;  // the trial's file becomes out_path below; only that one is named
  CellSummary sum;
  if (int rc = run_cell_flags(f, &sum); rc != kGoOn) return rc;
  const std::string trial_file = sum.first_failure_schedule;
  sum.first_failure_schedule.clear();
  print_summary(f.spec, sum);
  if (sum.failures == 0) {
    std::printf("not reproduced in %lld trials\n", static_cast<long long>(sum.trials));
    if (f.interrupted) return report_interrupted(fmt::format("the {} trials that ended", sum.trials));
    return kExitOk;
  }
  Schedule found;
  try {
    found = load_schedule(trial_file);
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitInternal;
  }
  save_schedule(found, out_path);
  if (trial_file != out_path) std::remove(trial_file.c_str());
  std::printf("schedule: %s (%s, %lld preemptions)\n", out_path.c_str(), outcome_name(found.outcome),
              static_cast<long long>(found.count_preemptions()));
  if (found.decisions.empty()) {
    std::printf("found by a free-running strategy: not replayable; search with random, pct:D or dfs:P\n");
    return kExitExpectationFailed;
  }
  Schedule final_schedule = found;
  // Ctrl-C: the schedule found is saved; minimising it is what is given up.
  bool interrupted = f.interrupted || campaign::interrupt_requested();
  if (!no_minimize && !interrupted) {
    MinimizeResult m;
    try {
      m = minimize(found, campaign::stop_on_interrupt(make_runner(f.in_process, f.spec.trial_timeout_s)), min_budget,
                   f.spec.any_program);
    } catch (const ScheduleError& e) {
      // The program changed on disk while racelab searched: the schedule is kept as found.
      m.error = e.what();
    } catch (const campaign::Interrupted&) {
      interrupted = true;
      m.error = "interrupted: the schedule is kept as found";
    }
    if (!m.ok) {
      std::printf("minimise: %s\n", m.error.c_str());
    } else {
      const std::string min_path = minimised_path(out_path);
      save_schedule(m.schedule, min_path);
      std::printf("minimised: %s: preemptions %lld -> %lld (context switches %lld -> %lld, %lld trials)\n",
                  min_path.c_str(), static_cast<long long>(m.preemptions_before),
                  static_cast<long long>(m.preemptions_after), static_cast<long long>(m.switches_before),
                  static_cast<long long>(m.switches_after), static_cast<long long>(m.trials));
      final_schedule = m.schedule;
    }
  }
  std::printf("replay: racelab replay %s\n", to_compact(final_schedule).c_str());
  if (interrupted) return report_interrupted("the search, and the schedule saved as found (not minimised)");
  return kExitExpectationFailed;
}

}  // namespace racelab::cli
