// `racelab replay`: follow a recorded schedule; report whether its outcome
// class comes back, or where the program diverged from it.
#include <cstdio>
#include <map>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "campaign/interrupt.h"
#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/schedule.h"
#include "racelab/exit_code.h"

namespace racelab::cli {

int replay_command(int argc, char** argv) {
  CLI::App app{"Replay a schedule file or a one-line racelab1:... string; report whether the outcome class is "
               "reproduced, or where the program diverged",
               argv[0]};
  std::string arg, out_path;
  int times = 1;
  bool in_process = false, any_program = false;
  double timeout = 30;
  app.add_option("schedule", arg, "Schedule file or compact string")->required();
  app.add_option("-n,--times", times, "Replay this many times")->check(positive_integer())->capture_default_str();
  app.add_option("-o,--out", out_path, "Write the replayed run as a full schedule file (events included)");
  app.add_flag("--in-process", in_process, "Replay in this process (no crash isolation)");
  app.add_option("--timeout", timeout, "Seconds before a replay counts as hung")
      ->check(positive_seconds())
      ->capture_default_str();
  add_any_program_flag(app, &any_program);
  add_python_option(app);
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  // Ctrl-C (campaign/interrupt.h): the replays that ended are tallied below, exit 130.
  campaign::install_interrupt_handlers();
  if (int rc = require_output(app.get_name(), "--out", out_path, Output::kFile); rc != kGoOn) return rc;
  Schedule s;
  if (!load_schedule_or_report(arg, &s, any_program)) return kExitBadInput;
  TrialRunner run = campaign::stop_on_interrupt(make_runner(in_process, timeout));
  std::map<std::string, int> tally;
  int same = 0, done = 0;
  for (int i = 0; i < times; ++i) {
    TrialSpec spec = s.replay_spec();
    TrialResult r;
    try {
      r = run(spec);
    } catch (const campaign::Interrupted&) {
      break;
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "racelab: %s: %s\n", schedule_source(arg).c_str(), e.what());
      return kExitBadInput;
    }
    if (r.metrics.value("bad_input", false)) {
      std::fprintf(stderr, "racelab: %s: %s\n", schedule_source(arg).c_str(), r.detail.c_str());
      return kExitBadInput;
    }
    ++done;
    ++tally[outcome_name(r.outcome)];
    same += r.outcome == s.outcome;
    if (r.outcome == Outcome::kDivergence) {
      std::printf("divergence at step %lld: %s\n", static_cast<long long>(r.failing_step), r.detail.c_str());
      return kExitDivergence;
    }
    if (i == 0 && !out_path.empty()) {
      Schedule full = Schedule::from_trial(spec, r);
      full.strategy = s.strategy;
      save_schedule(full, out_path);
    }
  }
  std::printf("replayed %s %d times: %d/%d reproduced %s", s.workload.c_str(), done, same, done,
              outcome_name(s.outcome));
  const char* sep = " (";
  for (const auto& [o, n] : tally) {
    std::printf("%s%s=%d", sep, o.c_str(), n);
    sep = ", ";
  }
  std::printf("%s\n", tally.empty() ? "" : ")");
  if (done < times) return report_interrupted(fmt::format("{} of the {} replays asked for", done, times));
  return same == times ? kExitOk : kExitExpectationFailed;
}

}  // namespace racelab::cli
