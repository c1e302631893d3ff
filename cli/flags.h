// cli/flags.h -- how every command parses its flags, so each maps problems to
// the same exit codes (racelab/exit_code.h): --help prints and exits 0, a bad
// flag prints CLI11's message and exits 2 (kExitUsage), never CLI11's own
// codes (105, 106, 109 ...).
//
//   CLI::App app{"What the command does (docs/ARCHITECTURE.md)", argv[0]};
//   app.add_option(...);
//   if (int rc = cli::parse_flags(app, argc, argv); rc != cli::kGoOn) return rc;
#ifndef RACELAB_CLI_FLAGS_H_
#define RACELAB_CLI_FLAGS_H_

#include <string>

#include <CLI/CLI.hpp>

namespace racelab::cli {

inline constexpr int kGoOn = -1;

// kGoOn when the command should run; otherwise the exit code to return
// (kExitOk after --help, kExitUsage after a bad flag, message printed).
int parse_flags(CLI::App& app, int argc, char** argv);

// A flag value found wrong after parsing (what CLI11's validators cannot
// check): prints it as CLI11 would and returns kExitUsage.
int usage_error(const CLI::App& app, const CLI::Error& error);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_FLAGS_H_
