// racelab/exit_code.h -- the exit codes of every `racelab` command.
//
// One contract, so CI and scripts can tell failures apart. The engine, the
// trainer and the command line all return these; no command returns a literal.
#ifndef RACELAB_EXIT_CODE_H_
#define RACELAB_EXIT_CODE_H_

namespace racelab {

enum ExitCode : int {
  kExitOk = 0,
  kExitExpectationFailed = 1,  // a race reproduced / an expectation did not hold
  kExitUsage = 2,              // bad flags
  kExitBadInput = 3,           // bad scenario, schedule, checkpoint or data file
  kExitDivergence = 4,         // a replay could not follow its schedule
  kExitInternal = 70,          // a bug in racelab itself
  kExitInterrupted = 130,      // SIGINT (128 + 2): stopped early, partial output kept
};

}  // namespace racelab

#endif  // RACELAB_EXIT_CODE_H_
