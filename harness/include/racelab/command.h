// racelab/command.h -- subcommands of the `racelab` executable.
//
// Each subcommand registers itself from its own translation unit:
//
//   static racelab::CommandRegistrar reg{"train", "Train drafters", &train_main};
//
// and parses its own arguments (CLI11). main() only dispatches on argv[1]. This
// keeps the harness free of trainer knowledge: the trainer's commands are
// registered by the glue in scenarios/, not named here.
#ifndef RACELAB_COMMAND_H_
#define RACELAB_COMMAND_H_

#include <functional>
#include <string>
#include <vector>

namespace racelab {

// Exit codes shared by every subcommand, so CI can tell failures apart.
enum ExitCode : int {
  kExitOk = 0,
  kExitExpectationFailed = 1,  // a race reproduced / an expectation did not hold
  kExitUsage = 2,              // bad flags
  kExitBadInput = 3,           // bad scenario, schedule, checkpoint or data file
  kExitDivergence = 4,         // a replay could not follow its schedule
  kExitInternal = 70,          // a bug in racelab itself
};

struct Command {
  std::string name;
  std::string summary;
  // argv[0] is "racelab <name>"; returns an ExitCode.
  std::function<int(int argc, char** argv)> run;
};

void register_command(Command command);
const std::vector<Command>& commands();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string summary, std::function<int(int, char**)> run) {
    register_command({std::move(name), std::move(summary), std::move(run)});
  }
};

}  // namespace racelab

#endif  // RACELAB_COMMAND_H_
