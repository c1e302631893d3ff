// `racelab list`: the registered workloads, their knobs and mitigations -- what
// a scenario file's "workload", "knobs" and "mitigations" may name.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/exit_code.h"
#include "racelab/workload.h"

namespace racelab::cli {

int list_command(int argc, char** argv) {
  CLI::App app{"List the registered workloads with their default knobs and accepted mitigations", argv[0]};
  bool as_json = false;
  app.add_flag("--json", as_json, "Machine-readable output");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  nlohmann::json all = nlohmann::json::array();
  for (const Workload* w : all_workloads()) {
    if (as_json) {
      all.push_back({{"name", w->name}, {"description", w->description}, {"knobs", w->default_knobs},
                     {"mitigations", w->mitigations}, {"needs_free_running", w->needs_free_running}});
      continue;
    }
    std::printf("%s%s\n  %s\n  knobs: %s\n  mitigations:", w->name.c_str(),
                w->needs_free_running ? "  (free running only: os, os+jitter)" : "", w->description.c_str(),
                w->default_knobs.dump().c_str());
    for (const auto& m : w->mitigations) std::printf(" %s", m.c_str());
    std::printf("\n\n");
  }
  if (as_json) std::printf("%s\n", all.dump(2).c_str());
  return kExitOk;
}

}  // namespace racelab::cli
