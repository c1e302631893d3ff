// `racelab __zygote`: the fork server for supervised workers (harness/engine/zygote.h).
// Internal: racelab starts it with its socket on fd 3; it takes no flags.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/zygote.h"

namespace racelab::cli {

int zygote_command(int argc, char** argv) {
  CLI::App app{"(internal) the fork server for supervised workers: started by racelab itself, never by hand", argv[0]};
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  return zygote_main();
}

}  // namespace racelab::cli
