// cli/torch_part.h -- the lean `racelab` and its LibTorch part, `racelab-torch`.
//
// Loading LibTorch costs about 290 shared libraries, a second or more per
// process (3-10 s on a loaded machine), and most commands never touch it:
// `exec` tests a C program, `pyrun` runs a Python worker, `validate`,
// `explain` and `merge` read files. So the `racelab` binary links no LibTorch.
// It carries every command and the workloads that need no LibTorch (the exec
// host's, the Python-hosted ones, the hard-bug catalogue, the benchmark's),
// and hands a command over to `racelab-torch` -- installed beside it, the
// same command table with every workload -- the moment it needs what only
// that part has:
//   - a command of the trainer or the benchmarks (train, train-target, bench);
//   - a workload this binary does not carry (the registry's miss hook,
//     racelab/workload.h): the compile layer's, the trainer, the real CUDA
//     ones -- or a name no part knows, which the LibTorch part then reports
//     with the whole list;
//   - op-level points asked for in the environment (RACELAB_OP_POINTS).
// Handing over is an exec of the same arguments in the same process: the
// caller sees one process, one exit status, one set of signals. Every
// command that hands over does so before it writes anything.
#ifndef RACELAB_CLI_TORCH_PART_H_
#define RACELAB_CLI_TORCH_PART_H_

namespace racelab::cli::torch_part {

// Keeps the command line as it was given (before cli_main rewrites argv[1])
// and installs the registry's miss hook. Called first in the lean binary.
void start(int argc, char** argv);

// Runs the command line kept by start() in racelab-torch: returns only if it
// cannot be started, with kExitInternal, after saying why.
int hand_over();

// A command row of the lean binary's table that only the LibTorch part runs.
int command(int argc, char** argv);

}  // namespace racelab::cli::torch_part

#endif  // RACELAB_CLI_TORCH_PART_H_
