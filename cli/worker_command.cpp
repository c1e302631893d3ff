// `racelab __worker`: the supervised trial worker (harness/engine/worker.h).
// Internal: the supervisor starts it with its pipes on fds 3-5; it takes no flags.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/worker.h"

namespace racelab::cli {

int worker_command(int argc, char** argv) {
  CLI::App app{"(internal) the supervised trial worker: started by racelab itself, never by hand", argv[0]};
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  return worker_main();
}

}  // namespace racelab::cli
