// `racelab run`: trials of one workload under a strategy, each classified.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"

namespace racelab::cli {

int run_command(int argc, char** argv) {
  CLI::App app{"Run trials of a workload under a strategy and classify each (outcome classes: "
               "docs/ARCHITECTURE.md)",
               argv[0]};
  CellFlags f;
  f.add(app, "auto", 100);
  add_failure_output_flags(app, f);
  add_parallel_flags(app, f, argc, argv);
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  return run_cell_and_summarise(f);
}

}  // namespace racelab::cli
