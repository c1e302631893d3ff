// racelab/cli.h -- the racelab command line, for a binary of your own.
//
// A program that registers its own workloads (racelab/workload.h) and hands its
// arguments to cli_main() is the `racelab` command for those workloads: run,
// reproduce, replay, minimize, list, validate, compare, ci and the rest, with
// the same flags, files, reports and exit codes (README.md, "Your own
// workloads"). Link racelab::cli and write main() yourself, or link
// racelab::main, which is exactly
//
//   int main(int argc, char** argv) { return racelab::cli_main(argc, argv); }
//
// The binary must be the one that registers the workloads: trials run in
// supervised worker processes that re-execute it (`<binary> __worker`).
#ifndef RACELAB_CLI_H_
#define RACELAB_CLI_H_

namespace racelab {

// argv[1] is the command; returns its exit code (racelab/exit_code.h).
int cli_main(int argc, char** argv);

}  // namespace racelab

#endif  // RACELAB_CLI_H_
