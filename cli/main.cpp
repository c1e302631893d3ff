// racelab -- dispatches `racelab <command> ...` to the command's function.
//
// kCommands below is the one list of commands: each row names a command, the
// line `racelab --help` prints for it, and the function that runs it. cli/ is
// the only folder that sees every layer (docs/ARCHITECTURE.md), so this table
// is where the harness, the compile layer, the trainer and the reports meet.
// main() itself is cli/entry.cpp: a user's binary that registers its own
// workloads runs the same table through cli_main (racelab/cli.h).
//
// This file is compiled twice. In racelab::cli (racelab-torch, a user's
// binary) every row runs here. In the lean `racelab` binary
// (RACELAB_LEAN_BINARY, cli/torch_part.h) the LibTorch rows hand the command
// over to racelab-torch, and so does a workload look-up this binary cannot
// answer.
#include <sys/prctl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "racelab/cli.h"
#include "racelab/exit_code.h"
#include "racelab/file_error.h"
#if RACELAB_LEAN_BINARY
#include "cli/torch_part.h"
#else
#include "racelab/op_points.h"
#endif

namespace {

struct Command {
  const char* name;     // "__x": internal, not listed by --help
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is "racelab <name>"; returns an ExitCode
};

namespace cli = racelab::cli;
#if RACELAB_LEAN_BINARY
// The rows only the LibTorch part runs.
constexpr auto train_command = &cli::torch_part::command;
constexpr auto train_target_command = &cli::torch_part::command;
constexpr auto bench_command = &cli::torch_part::command;
#else
constexpr auto train_command = &cli::train_command;
constexpr auto train_target_command = &cli::train_target_command;
constexpr auto bench_command = &cli::bench_command;
#endif
constexpr Command kCommands[] = {
    {"run", "Run trials of a workload under a strategy; classify each", &cli::run_command},
    {"reproduce", "Find a failing schedule, save and minimise it", &cli::reproduce_command},
    {"pyrun", "Run your own multi-threaded PyTorch script under racelab (--python CMD -- SCRIPT ARGS)",
     &cli::pyrun_command},
    {"replay", "Replay a schedule file or racelab1: string", &cli::replay_command},
    {"minimize", "Shrink a failing schedule to its fewest preemptions", &cli::minimize_command},
    {"exec", "Run trials of an unmodified program (-- PROGRAM ARGS) under controlled scheduling", &cli::exec_command},
    {"list", "List workloads, their knobs and mitigations", &cli::list_command},
    {"validate", "Check scenario files (schema, workloads, knobs, budgets)", &cli::validate_command},
    {"compare", "Run the scenario catalogue and write the mitigation comparison", &cli::compare_command},
    {"ci", "Run scenario expectations as regression checks (JUnit; exit 0 = all hold)", &cli::ci_command},
    {"merge", "Merge sharded campaign results into one report", &cli::merge_command},
    {"chrome-trace", "Export a schedule as Chrome trace JSON for Perfetto", &cli::chrome_trace_command},
    {"explain", "From an error message to the scenarios that reproduce it and the mitigations that hold",
     &cli::explain_command},
    {"check-torch", "Which of the catalogue's races your torch has, and which mitigations hold there (--python CMD)",
     &cli::check_torch_command},
    {"train", "Train drafters for a target LM and evaluate speculative decoding", train_command},
    {"train-target", "Train (or evaluate) the target language model", train_target_command},
    {"bench", "Benchmarks: scheduling cost, time to reproduce, mitigation cost, scaling", bench_command},
    {"version", "Print the version and build options", &cli::version_command},
    {"__worker", "(internal) the supervised trial worker", &cli::worker_command},
    {"__exec-worker", "(internal) the exec host's trial worker", &cli::exec_worker_command},
    {"__zygote", "(internal) the fork server for supervised workers", &cli::zygote_command},
};

bool internal(const Command& c) { return std::strncmp(c.name, "__", 2) == 0; }

void print_usage(std::FILE* out) {
  std::fprintf(out, "racelab %s -- reproduce, diagnose and compare mitigations for compile races\n\n",
               RACELAB_VERSION);
  std::fprintf(out, "usage: racelab <command> [options]   (racelab <command> --help for details)\n\ncommands:\n");
  for (const Command& c : kCommands)
    if (!internal(c)) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
}

}  // namespace

int racelab::cli_main(int argc, char** argv) {
  // A process racelab started for a role (argv[0] "racelab: worker",
  // "racelab: shard") carries it as its name too, for `ps -e` and top,
  // which show the name rather than the arguments (15 characters at most).
  if (argc > 0 && std::strncmp(argv[0], "racelab: ", 9) == 0) ::prctl(PR_SET_NAME, argv[0]);
#if RACELAB_LEAN_BINARY
  racelab::cli::torch_part::start(argc, argv);
#endif
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? racelab::kExitUsage : racelab::kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("racelab %s\n", RACELAB_VERSION);
    return racelab::kExitOk;
  }
  // Every command, internal ones included, one per line: what tests iterate.
  if (!std::strcmp(argv[1], "--list-commands")) {
    for (const Command& c : kCommands) std::printf("%s\n", c.name);
    return racelab::kExitOk;
  }
  // Op-level points for LibTorch workloads (racelab/op_points.h), asked for in
  // the environment (RACELAB_OP_POINTS, _RATE, _SEED), which the supervised
  // workers inherit, so their trials can switch threads at ATen ops. A replay
  // needs the same variables; without them it diverges (exit 4).
#if RACELAB_LEAN_BINARY
  if (std::getenv("RACELAB_OP_POINTS") != nullptr) return racelab::cli::torch_part::hand_over();
#else
  std::optional<racelab::OpPoints> op_points;
  try {
    if (auto options = racelab::OpPoints::options_from_env()) op_points.emplace(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "racelab: %s\n", e.what());
    return racelab::kExitBadInput;
  }
#endif
  for (const Command& c : kCommands) {
    if (std::strcmp(c.name, argv[1]) != 0) continue;
    std::string self = std::string("racelab ") + argv[1];
    argv[1] = self.data();
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const racelab::FileError& e) {
      // A path that cannot be written or read: the environment, not racelab.
      std::fprintf(stderr, "racelab %s: %s\n", c.name, e.what());
      return racelab::kExitBadInput;
    } catch (const std::filesystem::filesystem_error& e) {
      std::fprintf(stderr, "racelab %s: %s: %s\n", c.name, e.path1().c_str(), e.code().message().c_str());
      return racelab::kExitBadInput;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "racelab %s: internal error: %s\n", c.name, e.what());
      return racelab::kExitInternal;
    }
  }
  std::fprintf(stderr, "racelab: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return racelab::kExitUsage;
}
