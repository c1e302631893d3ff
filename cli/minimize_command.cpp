// `racelab minimize`: delta-debug the preemptions of a failing schedule while
// keeping its outcome class -- the fewest context switches that still fail.
#include <cstdio>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "campaign/interrupt.h"
#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/minimize.h"
#include "engine/schedule.h"
#include "racelab/exit_code.h"

namespace racelab::cli {

int minimize_command(int argc, char** argv) {
  CLI::App app{"Delta-debug the preemptions of a failing schedule, keeping its outcome class", argv[0]};
  std::string arg, out_path;
  int64_t budget = 400;
  bool in_process = false, any_program = false;
  double timeout = 30;
  app.add_option("schedule", arg, "Schedule file or compact string")->required();
  app.add_option("-o,--out", out_path, "Minimised schedule file (default: FILE.min.json)");
  app.add_option("-n,--budget", budget, "Trials the minimiser may run")
      ->check(positive_integer())
      ->capture_default_str();
  app.add_flag("--in-process", in_process, "Run trials in this process (no crash isolation)");
  app.add_option("--timeout", timeout, "Seconds before a trial counts as hung")
      ->check(positive_seconds())
      ->capture_default_str();
  add_any_program_flag(app, &any_program);
  add_python_option(app);
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  campaign::install_interrupt_handlers();  // Ctrl-C: stop after the trial in flight, exit 130
  if (int rc = require_output(app.get_name(), "--out", out_path, Output::kFile); rc != kGoOn) return rc;
  Schedule s;
  if (!load_schedule_or_report(arg, &s, any_program)) return kExitBadInput;
  if (out_path.empty()) out_path = arg.rfind(kCompactPrefix, 0) == 0 ? s.workload + ".min.json" : minimised_path(arg);
  MinimizeResult m;
  try {
    m = minimize(s, campaign::stop_on_interrupt(make_runner(in_process, timeout)), budget, any_program);
  } catch (const campaign::Interrupted&) {
    std::printf("interrupted: nothing written (%s is as it was)\n", schedule_source(arg).c_str());
    return kExitInterrupted;
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab: %s: %s\n", schedule_source(arg).c_str(), e.what());
    return kExitBadInput;
  }
  if (!m.ok) {
    std::printf("%s\n", m.error.c_str());
    return m.error.find("divergence") != std::string::npos ? kExitDivergence : kExitExpectationFailed;
  }
  save_schedule(m.schedule, out_path);
  std::printf("%s: %s, preemptions %lld -> %lld (context switches %lld -> %lld, %lld trials)\n", out_path.c_str(),
              outcome_name(m.schedule.outcome), static_cast<long long>(m.preemptions_before),
              static_cast<long long>(m.preemptions_after), static_cast<long long>(m.switches_before),
              static_cast<long long>(m.switches_after), static_cast<long long>(m.trials));
  std::printf("replay: racelab replay %s\n", to_compact(m.schedule).c_str());
  return kExitOk;
}

}  // namespace racelab::cli
