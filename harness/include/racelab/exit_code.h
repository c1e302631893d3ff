// racelab/exit_code.h -- the exit codes of every `racelab` command.
//
// One contract, so CI and scripts can tell failures apart. The engine, the
// trainer and the command line all return these; no command returns a literal.
// README.md ("Every command exits with one of these codes") is the table users
// read; keep the two in step.
#ifndef RACELAB_EXIT_CODE_H_
#define RACELAB_EXIT_CODE_H_

namespace racelab {

enum ExitCode : int {
  kExitOk = 0,
  kExitExpectationFailed = 1,  // a race reproduced / an expectation did not hold (compare, ci, merge alike)
  kExitUsage = 2,              // bad flags, a nonsense flag value included
  kExitBadInput = 3,           // bad input file or environment (unwritable output, full disk), named
  kExitDivergence = 4,         // a replay could not follow its schedule
  kExitInternal = 70,          // a bug in racelab itself
  kExitInterrupted = 130,      // SIGINT (128 + 2): stopped early, partial output kept
};

}  // namespace racelab

#endif  // RACELAB_EXIT_CODE_H_
