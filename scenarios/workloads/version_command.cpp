// `racelab version`: the build's identity, as schedules and reports record it.
#include <cstdio>

#include "racelab/command.h"

namespace {
int version_main(int, char**) {
  std::printf("racelab %s (interleaving points %s)\n", RACELAB_VERSION, RACELAB_POINTS ? "on" : "compiled out");
  return racelab::kExitOk;
}
racelab::CommandRegistrar registrar{"version", "Print the version and build options", &version_main};
}  // namespace
