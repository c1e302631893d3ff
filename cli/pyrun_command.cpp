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
  f.positional = {"python_script"};
  f.spec.strategy = "random";
  f.spec.max_trials = 20;
  std::vector<std::string> script;
  app.add_option("-m,--mitigation", f.spec.mitigation, "Mitigation name passed to the script ($RACELAB_MITIGATION)");
  app.add_option("-s,--strategy", f.spec.strategy, "os | os+jitter[:P] | random | pct:D | dfs:P")
      ->capture_default_str();
  app.add_option("--seed", f.spec.seed, "Cell seed (trial seeds derive from it)")->capture_default_str();
  app.add_option("-n,--budget", f.spec.max_trials, "Maximum trials")->check(positive_integer())->capture_default_str();
  app.add_option("--results", f.results, "Append every trial to this JSONL file");
  add_failure_output_flags(app, f);
  app.add_option("--timeout", f.spec.trial_timeout_s, "Seconds before a trial counts as hung")
      ->check(positive_seconds())
      ->capture_default_str();
  app.add_flag("-q,--quiet", f.quiet, "Print only the summary");
  add_python_option(app);
  app.add_option("script", script, "-- SCRIPT ARGS...")->required();
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  nlohmann::json args = nlohmann::json::array();
  for (size_t i = 1; i < script.size(); ++i) args.push_back(script[i]);
  f.knobs = {"script=" + nlohmann::json(script[0]).dump(), "args=" + args.dump()};
  f.spec.threads = 1;  // the script starts its own threads
  return run_cell_and_summarise(f);
}

}  // namespace racelab::cli
