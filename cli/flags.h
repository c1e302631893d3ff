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

// Validators for flag values, so a nonsense value (`--timeout -1`, `-n abc`,
// `-j 0`) is a usage error (exit 2) with a message naming what is expected.
CLI::Validator positive_integer();     // an integer >= 1
CLI::Validator positive_seconds();     // a number > 0
CLI::Validator non_negative_seconds(); // a number >= 0
CLI::Validator positive_number();      // a finite number > 0 (nan and inf are no learning rate)
CLI::Validator seed_value();           // an integer from 0 to 2^64-1, as written: -1 is not 2^64-1
CLI::Validator non_empty(const std::string& what);  // any text but "" (`-s ""` names no strategy)

// An input file named on the command line: kGoOn when it is a readable
// regular file, otherwise prints "racelab CMD: PATH: ..." and returns
// kExitBadInput -- a missing input is bad input (3) in every command.
int require_input_file(const CLI::App& app, const std::string& path);

// What an output flag names, for require_output().
enum class Output {
  kFile,           // a file in a folder that exists (--results, a schedule's -o)
  kFileAnyFolder,  // a file; racelab makes its missing folders (--junit, reproduce -o)
  kFolder,         // a folder; racelab makes it and its missing parents (--out, --schedule-dir)
};

// An output named on the command line, checked before any work, so no trial
// is lost to a path that cannot be written: kGoOn when `path` is empty or
// can be written as `kind` says (it exists and is writable, or the nearest
// folder above it that exists is a writable folder); otherwise prints
// "WHO: FLAG PATH: why" (WHO: "racelab CMD") and returns kExitBadInput.
// Nothing is left behind: where the path is missing, a probe folder is made
// in that nearest folder and removed at once, since access() says yes to
// root where nothing can be made (/proc, a mount that refuses new entries).
int require_output(const std::string& who, const std::string& flag, const std::string& path, Output kind);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_FLAGS_H_
