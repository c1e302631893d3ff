// `racelab __exec-worker`: the exec host's trial worker (harness/engine/exec_host.h).
// Internal: the supervisor starts it with its pipes on fds 3-5 and the program after `--`.
#include "cli/commands.h"
#include "engine/exec_host.h"

namespace racelab::cli {

int exec_worker_command(int argc, char** argv) { return exec_worker_main(argc, argv); }

}  // namespace racelab::cli
