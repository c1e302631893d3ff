// `racelab run`: trials of one workload under a strategy, each classified.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/exit_code.h"

namespace racelab::cli {

int run_command(int argc, char** argv) {
  CLI::App app{"Run trials of a workload under a strategy and classify each (outcome classes: "
               "docs/ARCHITECTURE.md)",
               argv[0]};
  CellFlags f;
  f.add(app, "auto", 100);
  app.add_option("--schedule-dir", f.spec.schedule_dir, "Write the first failing schedule of each outcome class here");
  app.add_flag("--stop-at-first-failure", f.spec.stop_at_first_failure, "Stop at the first trial that does not hold");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  CellSummary sum;
  if (int rc = run_cell_flags(f, &sum); rc != kGoOn) return rc;
  print_summary(f.spec, sum);
  return sum.failures > 0 ? kExitExpectationFailed : kExitOk;
}

}  // namespace racelab::cli
