// `racelab pyrun`: a user's own multi-threaded PyTorch script under racelab's
// scheduler, as trials of the Python workload `python_script` (the script and
// its arguments are its knobs, so results, schedules, `replay --python` and
// `minimize --python` work on it as on any workload).
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"

namespace racelab::cli {

int pyrun_command(int argc, char** argv) {
  CLI::App app{"Run your own multi-threaded PyTorch script under racelab: its threads are managed, torch's "
               "points are on, each run is a trial (racelab pyrun [options] -- SCRIPT ARGS...). The script "
               "path is as the Python sees it (inside ci/in-torch-root: relative to the repository root). "
               "The mitigation (-m) reaches the script as $RACELAB_MITIGATION, the trial seed as $RACELAB_SEED.",
               argv[0]};
  CellFlags f;
  f.pyrun = true;
  f.spec.strategy = "auto";
  f.spec.max_trials = 20;
  std::vector<std::string> script;
  int let_go_cpu_ms = 2000;  // above a compile's longest stretch with no point: a let-go loses determinism
  std::vector<std::string> points;
  std::string fail_on_output;
  int expect_exit = 0;
  app.add_option("-m,--mitigation", f.spec.mitigation,
                 "Your name for the variant (fix) to run, any name: the script reads it from $RACELAB_MITIGATION");
  app.add_option("-s,--strategy", f.spec.strategy,
                 "os | os+jitter[:P] | random | pct:D | pos | surw | dfs:P | dpor:P | auto | auto+os | "
                 "replay:FILE|STRING. auto here is auto+os: surw, pos and pct:3 with free (os) trials besides, so a "
                 "race that shows natively is never reported as holding (a free trial's failure has no schedule)")
      ->check(non_empty("a strategy"))
      ->capture_default_str();
  app.add_option("--let-go-cpu-ms", let_go_cpu_ms,
                 "A thread that runs this long on its own CPU time with no point (a loop over a plain flag) is let "
                 "go, and the schedule says so; 0 = never")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.add_option("--points", points,
                 "Points of your own (repeatable): REGEX puts one at the entry of every function whose "
                 "module.qualname matches ('mypkg\\..*|train\\.step'; the script is __main__ or its file's stem); "
                 "lines:REGEX one before every line run in matching modules ('lines:train|torch\\._dynamo\\.config'). "
                 "From the script: import racelab; racelab.point(\"name\")");
  app.add_option("--fail-on-output", fail_on_output,
                 "A trial in which a line the script's Python writes to sys.stdout or sys.stderr matches this "
                 "regular expression is wrong_result");
  app.add_option("--expect-exit", expect_exit, "The exit status of a passing run")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  app.add_option("--seed", f.spec.seed, "Cell seed (trial seeds derive from it)")->check(seed_value())->capture_default_str();
  app.add_option("-n,--budget", f.spec.max_trials, "Maximum trials")->check(positive_integer())->capture_default_str();
  app.add_option("--results", f.results, "Append every trial to this JSONL file");
  add_failure_output_flags(app, f);
  add_parallel_flags(app, f, argc, argv);
  app.add_option("--timeout", f.spec.trial_timeout_s, "Seconds before a trial counts as hung")
      ->check(positive_seconds())
      ->capture_default_str();
  app.add_flag("-q,--quiet", f.quiet, "Print only the summary");
  add_python_option(app);
  app.add_option("script", script, "-- SCRIPT ARGS...")->required();
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  f.positional = script;
  f.knobs = {"let_go_cpu_ms=" + std::to_string(let_go_cpu_ms)};
  if (!points.empty()) f.knobs.push_back("points=" + nlohmann::json(points).dump());
  if (!fail_on_output.empty()) f.knobs.push_back("fail_on_output=" + nlohmann::json(fail_on_output).dump());
  if (expect_exit != 0) f.knobs.push_back("expect_exit=" + std::to_string(expect_exit));
  if (f.spec.strategy == "auto") f.spec.strategy = "auto+os";
  return run_cell_and_summarise(f);
}

}  // namespace racelab::cli
