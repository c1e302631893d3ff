// `racelab version`: the build's identity, as schedules and reports record it.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/exit_code.h"

namespace racelab::cli {

int version_command(int argc, char** argv) {
  CLI::App app{"Print the version and build options", argv[0]};
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  std::printf("racelab %s (interleaving points %s)\n", RACELAB_VERSION, RACELAB_POINTS ? "on" : "compiled out");
  return kExitOk;
}

}  // namespace racelab::cli
