// `racelab replay` and `racelab minimize`: follow a recorded schedule, shrink it.
#include <cstdio>
#include <map>

#include <CLI/CLI.hpp>

#include "cli/cli_util.h"
#include "engine/minimize.h"
#include "engine/schedule.h"
#include "cli/commands.h"
#include "racelab/exit_code.h"

namespace racelab {
namespace {

bool load(const std::string& arg, Schedule* s) {
  try {
    *s = load_schedule_arg(arg);
    return true;
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return false;
  }
}

}  // namespace

namespace cli {

int replay_command(int argc, char** argv) {
  CLI::App app{"Replay a schedule file or a one-line racelab1:... string; report whether the outcome class is "
               "reproduced, or where the program diverged",
               argv[0]};
  std::string arg, out_path;
  int times = 1;
  bool in_process = false;
  double timeout = 30;
  app.add_option("schedule", arg, "Schedule file or compact string")->required();
  app.add_option("-n,--times", times, "Replay this many times")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("-o,--out", out_path, "Write the replayed run as a full schedule file (events included)");
  app.add_flag("--in-process", in_process, "Replay in this process (no crash isolation)");
  app.add_option("--timeout", timeout, "Seconds before a replay counts as hung")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  Schedule s;
  if (!load(arg, &s)) return kExitBadInput;
  TrialRunner run = cli::make_runner(in_process, timeout);
  std::map<std::string, int> tally;
  int same = 0;
  for (int i = 0; i < times; ++i) {
    TrialSpec spec = s.replay_spec();
    TrialResult r;
    try {
      r = run(spec);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "racelab: schedule names %s\n", e.what());
      return kExitBadInput;
    }
    if (r.metrics.value("bad_input", false)) {
      std::fprintf(stderr, "racelab: %s\n", r.detail.c_str());
      return kExitBadInput;
    }
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
  std::printf("replayed %s %d times: %d/%d reproduced %s", s.workload.c_str(), times, same, times,
              outcome_name(s.outcome));
  const char* sep = " (";
  for (const auto& [o, n] : tally) {
    std::printf("%s%s=%d", sep, o.c_str(), n);
    sep = ", ";
  }
  std::printf(")\n");
  return same == times ? kExitOk : kExitExpectationFailed;
}

int minimize_command(int argc, char** argv) {
  CLI::App app{"Delta-debug the preemptions of a failing schedule, keeping its outcome class", argv[0]};
  std::string arg, out_path;
  int64_t budget = 400;
  bool in_process = false;
  double timeout = 30;
  app.add_option("schedule", arg, "Schedule file or compact string")->required();
  app.add_option("-o,--out", out_path, "Minimised schedule file (default: FILE.min.json)");
  app.add_option("-n,--budget", budget, "Trials the minimiser may run")->capture_default_str();
  app.add_flag("--in-process", in_process, "Run trials in this process (no crash isolation)");
  app.add_option("--timeout", timeout, "Seconds before a trial counts as hung")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  Schedule s;
  if (!load(arg, &s)) return kExitBadInput;
  if (out_path.empty()) {
    bool is_file = arg.rfind(kCompactPrefix, 0) != 0;
    out_path = is_file && arg.size() > 5 && arg.substr(arg.size() - 5) == ".json"
                   ? arg.substr(0, arg.size() - 5) + ".min.json"
                   : (is_file ? arg + ".min" : s.workload + ".min.json");
  }
  MinimizeResult m;
  try {
    m = minimize(s, cli::make_runner(in_process, timeout), budget);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab: schedule names %s\n", e.what());
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

}  // namespace cli
}  // namespace racelab
