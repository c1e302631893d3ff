// `racelab validate`: check scenario files against the schema
// (scenarios/SCHEMA.md) and the registered workloads, every problem at once.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/exit_code.h"
#include "campaign/catalogue.h"
#include "campaign/matrix.h"
#include "compile/torch_compat.h"

namespace racelab::cli {

int validate_command(int argc, char** argv) {
  CLI::App app{"Check scenario files: every problem with its file, JSON path, what was found and expected",
               argv[0]};
  std::vector<std::string> paths;
  app.add_option("files", paths, "Scenario files or directories of *.json")->required();
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  int rc = kExitOk;
  auto scenarios = campaign::load_catalogue(paths, &rc, racelab::compile::libtorch_full_version());
  if (rc != kExitOk) return rc;
  for (const auto& s : scenarios) {
    size_t cells = campaign::plan_cells({s}, {}).size();
    std::printf("ok  %-28s %s (%zu mitigations, %zu cells)\n", s.name.c_str(), s.file.c_str(), s.mitigations.size(),
                cells);
  }
  return rc;
}

}  // namespace racelab::cli
