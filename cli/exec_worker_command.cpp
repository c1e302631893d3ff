// `racelab __exec-worker`: the exec host's trial worker (harness/engine/exec_host.h).
// Internal: the supervisor starts it with its pipes on fds 3-5 and the program after `--`.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/exec_host.h"

namespace racelab::cli {

int exec_worker_command(int argc, char** argv) {
  CLI::App app{"(internal) the exec host's trial worker: started by racelab itself, never by hand", argv[0]};
  bool exec_per_trial = false;
  std::vector<std::string> program;
  app.add_flag("--fork-server", "Fork the program stopped at main per trial (the default)");
  app.add_flag("--exec-per-trial", exec_per_trial, "Start the program afresh per trial");
  app.add_option("program", program, "-- PROGRAM ARGS...")->required();
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  return exec_worker_main(program, !exec_per_trial);
}

}  // namespace racelab::cli
