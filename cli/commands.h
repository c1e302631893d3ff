// cli/commands.h -- the entry point of every `racelab` command.
//
// Each takes argv[0] = "racelab <name>" and the command's own arguments, and
// returns a racelab::ExitCode (racelab/exit_code.h). Each lives in
// cli/NAME_command.cpp and parses its flags with cli::parse_flags
// (cli/flags.h). cli/main.cpp lists them all in its command table; adding a
// command means a file, a line here and a row there.
#ifndef RACELAB_CLI_COMMANDS_H_
#define RACELAB_CLI_COMMANDS_H_

namespace racelab::cli {

// The engine: trials, schedules, minimisation.
int run_command(int argc, char** argv);
int pyrun_command(int argc, char** argv);
int reproduce_command(int argc, char** argv);
int replay_command(int argc, char** argv);
int minimize_command(int argc, char** argv);
int worker_command(int argc, char** argv);  // internal: the supervised trial worker
int zygote_command(int argc, char** argv);  // internal: the fork server for supervised workers
int exec_command(int argc, char** argv);
int exec_worker_command(int argc, char** argv);  // internal: the exec host's worker
int list_command(int argc, char** argv);

// Campaigns and reports.
int validate_command(int argc, char** argv);
int compare_command(int argc, char** argv);
int ci_command(int argc, char** argv);
int merge_command(int argc, char** argv);
int chrome_trace_command(int argc, char** argv);
int explain_command(int argc, char** argv);  // error message -> scenarios, mitigations that hold
int check_torch_command(int argc, char** argv);  // the real-torch catalogue on the user's torch

// The drafter trainer.
int train_command(int argc, char** argv);
int train_target_command(int argc, char** argv);

int bench_command(int argc, char** argv);
int version_command(int argc, char** argv);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_COMMANDS_H_
