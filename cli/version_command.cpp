// `racelab version`: the build's identity, as schedules and reports record it.
#include <cstdio>

#include "cli/commands.h"
#include "racelab/exit_code.h"

namespace racelab::cli {

int version_command(int, char**) {
  std::printf("racelab %s (interleaving points %s)\n", RACELAB_VERSION, RACELAB_POINTS ? "on" : "compiled out");
  return racelab::kExitOk;
}

}  // namespace racelab::cli
