#include "cli/cell_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "campaign/interrupt.h"
#include "cli/cell_parts.h"
#include "cli/flags.h"
#include "engine/exec_host.h"
#include "engine/outcome.h"
#include "engine/python_host.h"
#include "engine/run_trial.h"
#include "engine/schedule_fit.h"
#include "engine/trial_plan.h"
#include "racelab/workload.h"
#include "engine/supervisor.h"
#include "racelab/exit_code.h"
#include "racelab/jsonl.h"

namespace racelab::cli {

void CellFlags::add(CLI::App& app, const std::string& default_strategy, int64_t default_budget, bool exec_only) {
  spec.strategy = default_strategy;
  spec.max_trials = default_budget;
  exec = exec_only;
  if (exec_only) {
    app.add_option("program", positional, "-- PROGRAM ARGS...: a dynamically linked program and its arguments")
        ->required();
  } else {
    app.add_option("workload", positional, "Registered workload (racelab list), or with --exec: -- PROGRAM ARGS...")
        ->required();
    app.add_flag("--exec", exec, "Trials of an unmodified program: -- PROGRAM ARGS... (see racelab exec --help)");
    app.add_flag("--pyrun", pyrun,
                 "Trials of your own Python script: -- SCRIPT ARGS... (see racelab pyrun --help; knobs such as "
                 "let_go_cpu_ms=MS and points=[...] with -k)");
  }
  app.add_flag("!--no-fork-server", program.fork_server,
               "--exec: start the program afresh per trial instead of forking it stopped at main (for programs "
               "that do their work before main)");
  app.add_option("--fail-on-output", program.fail_on_output,
                 "--exec: a trial whose output has a line matching this regular expression is wrong_result");
  app.add_option("--expect-exit", program.expect_exit, "--exec: the exit status of a passing run")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  app.add_option("--let-go-ms", program.let_go_ms,
                 "--exec: a running thread that uses this much CPU time, or sleeps in the kernel this long, with no "
                 "scheduling point is let go (an uncontrolled wait: a spin loop, a futex; 0 = never). Its own CPU "
                 "time, not the wall clock: a loaded machine lets no thread go")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.add_option("--max-steps", program.max_steps,
                 "--exec: scheduling steps after which a trial ends as hang (livelock); raise it for a long run "
                 "of a program built with memory-access points (racelab-cc), where every shared access is a step")
      ->check(CLI::Range(int64_t{1}, kMaxExecSteps))
      ->capture_default_str();
  app.add_flag("--real-time", program.real_time,
               "--exec: the program's time is the real one: it reads the real clocks, a sleep lasts its real time "
               "(the other threads wait for it: one runs at a time) and alarm, setitimer and timer_create are the "
               "real timers. By default time(), gettimeofday() and clock_gettime() read a logical clock that "
               "advances with the schedule, and timers fire on it (recorded, so replays read the same times)");
  app.add_option("--stdin", program.stdin_path,
                 "--exec: a file every trial reads as its standard input, from its start (default: /dev/null, "
                 "so a program that reads stdin sees end-of-file)");
  app.add_option("--env", program.env,
                 "--exec: NAME=VALUE in the program's environment (repeatable); LD_PRELOAD=LIB loads LIB beside "
                 "racelab's library, e.g. libracelab_op_points_preload.so with RACELAB_OP_POINTS=REGEX for "
                 "op-level points in a LibTorch program");
  app.add_option("--scenario", spec.scenario, "Scenario name recorded in results and schedules");
  if (!exec_only) {
    app.add_option("-m,--mitigation", spec.mitigation, "Mitigation (default: the workload's first)");
    app.add_option("-t,--threads", spec.threads, "Worker threads the workload starts")->check(CLI::Range(1, 64))
        ->capture_default_str();
  }
  app.add_option("-s,--strategy", spec.strategy,
                 "os | os+jitter[:P] | random | pct:D | pos | surw | dfs:P | dpor:P | auto | replay:FILE|STRING")
      ->check(non_empty("a strategy"))
      ->capture_default_str();
  app.add_option("--seed", spec.seed, "Cell seed (trial seeds derive from it)")->check(seed_value())->capture_default_str();
  app.add_option("-n,--budget", spec.max_trials, "Maximum trials")->check(positive_integer())
      ->capture_default_str();
  app.add_option("--max-seconds", spec.max_seconds, "Stop after this many seconds (0: no limit)")
      ->check(non_negative_seconds());
  if (!exec_only) app.add_option("-k,--knob", knobs, "Workload knob NAME=VALUE (repeatable)");
  app.add_option("--results", results, "Append every trial to this JSONL file");
  app.add_option("--timeout", spec.trial_timeout_s, "Seconds before a trial counts as hung")
      ->check(positive_seconds())
      ->capture_default_str();
  app.add_flag("--in-process", in_process, "Run trials in this process (no crash isolation)");
  app.add_flag("-q,--quiet", quiet, "Print only the summary");
  add_any_program_flag(app, &spec.any_program);
  add_python_option(app);
}

std::vector<std::string> pyrun_knob_flags(const std::vector<std::string>& script_argv) {
  nlohmann::json args = nlohmann::json::array();
  for (size_t i = 1; i < script_argv.size(); ++i) args.push_back(script_argv[i]);
  // let_go_cpu_ms as pyrun's default, in the knobs so a schedule records it
  // (the host reads the trial's knobs, not the workload's defaults).
  const PyrunTarget target = parse_pyrun_target(script_argv.at(0));
  std::vector<std::string> out = {"script=" + nlohmann::json(target.script).dump(), "args=" + args.dump(),
                                  "let_go_cpu_ms=2000"};
  if (!target.function.empty()) out.push_back("function=" + nlohmann::json(target.function).dump());
  // The script as racelab sees it from here; a path only the Python sees
  // (another root) has no id, and the worker still finds it or says why.
  const std::string id = program_id(target.script);
  if (id.rfind("0:", 0) != 0) out.push_back("script_id=" + nlohmann::json(id).dump());
  return out;
}

void add_python_option(CLI::App& app) {
  app.add_option_function<std::string>(
      "--python",
      [](const std::string& cmd) {
        set_python_command(cmd);
        ::setenv("RACELAB_PYTHON", cmd.c_str(), 1);
      },
      "Command that starts a Python with torch, for real-torch workloads (e.g. \"bash ci/in-torch-root -- "
      "python3\" or a venv's python); default: $RACELAB_PYTHON");
}

namespace {

void print_failure(const TrialRecord& r, bool show_schedule_file) {
  std::printf("trial %lld: %s: %s\n", static_cast<long long>(r.trial), r.outcome.c_str(), r.detail.c_str());
  if (!r.compact.empty()) std::printf("  replay: racelab replay %s\n", r.compact.c_str());
  if (show_schedule_file && !r.schedule_file.empty()) std::printf("  schedule: %s\n", r.schedule_file.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_cell_flags(CellFlags& f, CellSummary* sum) {
  // First, before any child process: a Ctrl-C from here on prints the summary of the trials so far and exits 130.
  campaign::install_interrupt_handlers();
  f.spec.supervised = !f.in_process;
  f.spec.warn = print_warning;
  if (f.exec) {
    if (!f.knobs.empty() || f.in_process) {
      std::fprintf(stderr, "racelab: --exec takes no --knob and no --in-process: the program runs in its own process\n");
      return kExitUsage;
    }
    for (const auto& e : f.program.env)
      if (e.find('=') == std::string::npos || e.front() == '=') {
        std::fprintf(stderr, "racelab: --env '%s': expected NAME=VALUE\n", e.c_str());
        return kExitUsage;
      }
    f.program.argv = f.positional;
    f.spec.workload = kExecWorkload;
    f.spec.threads = 1;  // the program starts its own threads; recorded as 1
    try {
      f.spec.knobs = exec_knobs(f.program);
    } catch (const ExecError& e) {
      std::fprintf(stderr, "racelab: %s\n", e.what());
      return kExitBadInput;
    }
  } else if (f.pyrun) {
    if (f.in_process) {
      std::fprintf(stderr, "racelab: --pyrun takes no --in-process: the script runs in a Python worker\n");
      return kExitUsage;
    }
    if (f.positional.empty()) {
      std::fprintf(stderr, "racelab: --pyrun: expected -- SCRIPT ARGS...\n");
      return kExitUsage;
    }
    f.spec.workload = kPythonScriptWorkload;
    f.spec.threads = 1;  // the script starts its own threads; recorded as 1
    std::vector<std::string> knobs = pyrun_knob_flags(f.positional);
    knobs.insert(knobs.end(), f.knobs.begin(), f.knobs.end());
    try {
      f.spec.knobs = parse_knobs(knobs);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "racelab: %s\n", e.what());
      return kExitUsage;
    }
  } else {
    const ExecProgram defaults;
    if (!f.program.fork_server || !f.program.fail_on_output.empty() || f.program.expect_exit != defaults.expect_exit ||
        f.program.let_go_ms != defaults.let_go_ms || f.program.max_steps != defaults.max_steps ||
        f.program.real_time || !f.program.env.empty() || !f.program.stdin_path.empty()) {
      std::fprintf(stderr, "racelab: --no-fork-server, --fail-on-output, --expect-exit, --let-go-ms, --max-steps, "
                           "--real-time, --stdin and --env go with --exec\n");
      return kExitUsage;
    }
    if (f.positional.size() != 1) {
      std::fprintf(stderr, "racelab: expected one workload (racelab list), got %zu arguments; a program goes after "
                           "--exec --\n", f.positional.size());
      return kExitUsage;
    }
    f.spec.workload = f.positional.front();
    try {
      f.spec.knobs = parse_knobs(f.knobs);
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "racelab: %s\n", e.what());
      return kExitUsage;
    }
  }
  // Before the first trial: a failing schedule or a record that cannot be written loses the trials before it.
  for (int rc : {require_output("racelab", "--results", f.results, Output::kFile),
                 require_output("racelab", "--schedule-dir", f.spec.schedule_dir, Output::kFolder)})
    if (rc != kGoOn) return rc;
  // A part process of `-j N` (cli/cell_parts.h): its blocks of trials, its
  // records and summary to the parent's folder, nothing printed.
  std::string part_dir;
  const bool is_part = part_from_environment(&f.spec.part, &part_dir);
  if (is_part) {
    f.results = part_results_path(part_dir, f.spec.part.index);
    f.quiet = true;
    f.jobs = 1;
    f.progress = false;
  }
  std::unique_ptr<JsonlWriter> out;
  std::set<std::string> shown;
  auto take = [&](const TrialRecord& r) {
    if (out) out->write(r.to_json());
    if (f.pyrun && r.metrics.is_object() && r.metrics.contains("point_hits") && r.metrics["point_hits"].is_object())
      for (const auto& [name, n] : r.metrics["point_hits"].items())
        if (n.is_number_integer()) f.point_hits[name] += n.get<int64_t>();
    if (!f.quiet && r.outcome != "holds" && shown.insert(r.outcome).second) print_failure(r, f.show_schedule_files);
  };
  const std::string strategy = f.spec.strategy.empty() ? "auto" : f.spec.strategy;
  const int parts = static_cast<int>(std::min<int64_t>(
      f.jobs, parts_with_trials({0, f.jobs, 0}, f.spec.max_trials, trial_block(strategy))));
  try {
    if (!f.results.empty()) out = std::make_unique<JsonlWriter>(f.results);
    if (parts > 1) {
      // The parts' records come back in trial order once all have ended: the
      // first failure of each class shown is the lowest trial, as with -j 1.
      PartsResult got;
      if (int rc = run_in_parts(f.argv, parts, f.spec, f.progress, &got); rc != kGoOn) return rc;
      for (const TrialRecord& r : got.records) take(r);
      *sum = got.summary;
      f.interrupted = got.interrupted;
    } else {
      CellProgress line(f.progress, f.spec.max_trials);
      int64_t trials = 0, failures = 0;
      const campaign::CellRun run =
          campaign::run_cell_until_interrupted(&racelab::run_cell, f.spec, [&](const TrialRecord& r) {
            if (!f.quiet && r.outcome != "holds" && shown.count(r.outcome) == 0) line.done();  // the failure's lines first
            take(r);
            line.update(++trials, failures += is_failure(r.outcome) ? 1 : 0);
          });
      line.done();
      *sum = run.summary;
      f.interrupted = run.interrupted;
    }
    if (is_part) write_part_summary(part_summary_path(part_dir, f.spec.part.index), *sum);
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitBadInput;
  } catch (const ExecError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return kExitUsage;
  }
  return kGoOn;
}

nlohmann::json parse_knobs(const std::vector<std::string>& flags) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : flags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(fmt::format("--knob '{}': expected NAME=VALUE", f));
    std::string value = f.substr(eq + 1);
    nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
    out[f.substr(0, eq)] = v.is_discarded() ? nlohmann::json(value) : v;
  }
  return out;
}

TrialRunner make_runner(bool in_process, double timeout_s) {
  if (in_process) return [](const TrialSpec& t) { return run_trial(t); };
  auto counter = std::make_shared<int64_t>(1000000);
  return [timeout_s, counter](const TrialSpec& t) {
    TrialSpec s = t;
    s.trial = (*counter)++;  // distinct ids keep the worker's markers apart
    s.watchdog_s = std::max(0.2, timeout_s / 2);
    return supervisor_for(s).run(s, timeout_s);
  };
}

void print_summary(const CellSpec& spec, const CellSummary& sum) {
  if (spec.workload == kExecWorkload) {
    std::printf("%s / %s: %lld trials in %.2f s (%.1f trials/s)\n",
                spec.scenario.empty() ? spec.knobs.at("argv")[0].get_ref<const std::string&>().c_str()
                                      : spec.scenario.c_str(),
                spec.strategy.c_str(), static_cast<long long>(sum.trials), sum.wall_s,
                sum.wall_s > 0 ? sum.trials / sum.wall_s : 0.0);
  } else {
    std::printf("%s / %s / %s / %d threads: %lld trials in %.2f s (%.1f trials/s)\n",
                spec.scenario.empty() ? spec.workload.c_str() : spec.scenario.c_str(),
                spec.mitigation.empty() ? "default" : spec.mitigation.c_str(), spec.strategy.c_str(), spec.threads,
                static_cast<long long>(sum.trials), sum.wall_s, sum.wall_s > 0 ? sum.trials / sum.wall_s : 0.0);
  }
  for (const auto& [outcome, n] : sum.by_outcome)
    std::printf("  %-16s %lld\n", outcome.c_str(), static_cast<long long>(n));
  double rate = sum.trials ? static_cast<double>(sum.failures) / static_cast<double>(sum.trials) : 0;
  std::printf("  failure rate     %.4f (%lld/%lld)\n", rate, static_cast<long long>(sum.failures),
              static_cast<long long>(sum.trials));
  if (sum.pct_floor > 0)
    std::printf("  pct floor        %.3g (guaranteed per-trial hit probability for a depth-%d bug; n=%d, k=%lld)\n",
                sum.pct_floor, sum.pct_depth, sum.pct_n, static_cast<long long>(sum.pct_k));
  if (!sum.note.empty() && spec.strategy.rfind("dfs:", 0) != 0) std::printf("  search           %s\n", sum.note.c_str());
  if (spec.strategy.rfind("dfs:", 0) == 0)
    std::printf("  dfs verdict      %s\n", sum.exhausted ? "complete" : "incomplete");
  if (sum.first_failure_trial >= 0) {
    std::printf("  first failure    trial %lld", static_cast<long long>(sum.first_failure_trial));
    if (!sum.first_failure_schedule.empty()) std::printf(" (%s)", sum.first_failure_schedule.c_str());
    std::printf("\n");
  }
}

void add_any_program_flag(CLI::App& app, bool* any_program) {
  app.add_flag("--any-program", *any_program,
               "Replay a schedule even when it names no program, or another build of it (warns: a divergence may "
               "then mean another program, not another outcome)");
}

void print_warning(const std::string& text) {
  std::fprintf(stderr, "racelab: warning: %s\n", text.c_str());
  std::fflush(stderr);
}

bool load_schedule_or_report(const std::string& arg, Schedule* s, bool any_program) {
  try {
    *s = load_schedule_arg(arg);
    // Made for this program (before its knobs are checked: a program of another build is that, not a bad knob).
    const std::string warning = check_schedule_fits(*s, schedule_source(arg), s->workload, s->knobs, any_program);
    if (!warning.empty()) {
      print_warning(warning);
      adopt_program(s);
    }
    // What it names must exist here, before any trial: a config error with the
    // file's name, never a trial's "bad trial".
    const Workload& w = require_workload(s->workload);
    (void)resolve_mitigation(w, s->mitigation);
    (void)merge_knobs(w, s->knobs);
    return true;
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "racelab: %s: %s\n", schedule_source(arg).c_str(), e.what());
  }
  return false;
}

std::string schedule_source(const std::string& arg) {
  return arg.rfind(kCompactPrefix, 0) == 0 ? "compact form" : arg;
}

std::string minimised_path(const std::string& path) {
  return path.size() > 5 && path.substr(path.size() - 5) == ".json" ? path.substr(0, path.size() - 5) + ".min.json"
                                                                      : path + ".min";
}

void add_parallel_flags(CLI::App& app, CellFlags& flags, int argc, char** argv) {
  flags.argv.assign(argv, argv + argc);
  app.add_option("-j,--jobs", flags.jobs,
                 "Spread the cell's trials over this many processes (blocks of trials dealt over them: the same "
                 "trials as -j 1, trial for trial)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_flag("!--no-progress", flags.progress, "No live progress line on a terminal");
}

void add_failure_output_flags(CLI::App& app, CellFlags& flags) {
  app.add_option("--schedule-dir", flags.spec.schedule_dir, "Write the first failing schedule of each outcome class here");
  app.add_flag("--stop-at-first-failure", flags.spec.stop_at_first_failure, "Stop at the first trial that does not hold");
}

int run_cell_and_summarise(CellFlags& flags) {
  CellSummary sum;
  if (int rc = run_cell_flags(flags, &sum); rc != kGoOn) return rc;
  print_summary(flags.spec, sum);
  if (flags.pyrun) {
    // What a "holds" rests on: the points the trials met (none: the threads
    // ran serialised between their starts and ends, and only free trials judged).
    std::vector<std::pair<int64_t, std::string>> hits;
    for (const auto& [name, n] : flags.point_hits) hits.emplace_back(-n, name);
    std::sort(hits.begin(), hits.end());
    std::string line;
    for (size_t i = 0; i < hits.size() && i < 6; ++i)
      line += fmt::format("{}{} {}", i ? ", " : "", hits[i].second, -hits[i].first);
    if (hits.size() > 6) line += fmt::format(", +{} more", hits.size() - 6);
    std::printf("  points hit       %s\n", hits.empty() ? "none (only lock, wait and thread steps)" : line.c_str());
  }
  if (flags.interrupted) return report_interrupted(fmt::format("the {} trials that ended", sum.trials));
  // A replay that could not follow its schedule is a divergence (README: exit 4), as under `racelab replay`.
  if (flags.spec.strategy.rfind("replay:", 0) == 0 && sum.by_outcome.count("divergence") > 0) return kExitDivergence;
  return sum.failures > 0 ? kExitExpectationFailed : kExitOk;
}

int report_interrupted(const std::string& what_so_far) {
  std::printf("interrupted: the summary above covers %s\n", what_so_far.c_str());
  std::fflush(stdout);
  return kExitInterrupted;
}

}  // namespace racelab::cli
