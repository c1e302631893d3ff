// `racelab exec`: trials of an unmodified, dynamically linked program under
// controlled scheduling (the exec host, harness/engine/exec_host.h).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"

namespace racelab::cli {

int exec_command(int argc, char** argv) {
  CLI::App app{"Run trials of an unmodified, dynamically linked program under a strategy: "
               "racelab exec [options] -- PROGRAM ARGS... Its pthread calls (threads, mutexes, condition variables, "
               "rwlocks, barriers, once, semaphores, yields and sleeps; std::thread and std::mutex with them) become "
               "scheduling points. Outcomes: exit status other than --expect-exit -> error, a signal -> crash, every "
               "thread blocked -> hang (naming the lock-order cycle), --fail-on-output -> wrong_result",
               argv[0]};
  CellFlags f;
  f.add(app, "auto", 100, /*exec_only=*/true);
  add_failure_output_flags(app, f);
  add_parallel_flags(app, f, argc, argv);
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  return run_cell_and_summarise(f);
}

}  // namespace racelab::cli
