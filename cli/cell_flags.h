// cli/cell_flags.h -- what the engine's commands (run, reproduce, replay,
// minimize) share: the flags of one cell, the trial runner, result printing.
#ifndef RACELAB_CLI_CELL_FLAGS_H_
#define RACELAB_CLI_CELL_FLAGS_H_

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/cell.h"
#include "engine/exec_host.h"
#include "engine/minimize.h"
#include "engine/schedule.h"

namespace racelab::cli {

// The flags of `racelab run`, `racelab exec` and `racelab reproduce`: one
// cell of trials. With --exec (always, for `racelab exec`) the positional
// arguments are a program and its arguments (after `--`), run as the workload
// "exec" (engine/exec_host.h).
struct CellFlags {
  CellSpec spec;
  std::vector<std::string> positional;  // WORKLOAD, or with --exec: PROGRAM ARGS...
  bool exec = false;
  ExecProgram program;
  bool pyrun = false;  // --pyrun (always, for `racelab pyrun`): positional is SCRIPT ARGS...
  // --pyrun: the points the trials hit, summed (metrics.point_hits), for the
  // summary: a "holds" rests on them and on its controlled and free trials.
  std::map<std::string, int64_t> point_hits;
  std::vector<std::string> knobs;
  std::string results;
  bool in_process = false;
  bool quiet = false;
  bool show_schedule_files = true;  // false: the caller moves them (reproduce)
  bool interrupted = false;         // set by run_cell_flags: Ctrl-C stopped the cell (campaign/interrupt.h)
  // -j N: the cell's trials over N part processes (cli/cell_parts.h), which
  // rerun this command line (`argv`, as the command got it).
  int jobs = 1;
  bool progress = true;  // the live line on a terminal (--no-progress: off)
  std::vector<std::string> argv;

  // exec_only: `racelab exec` (no --exec flag, no workload, no knobs).
  void add(CLI::App& app, const std::string& default_strategy, int64_t default_budget, bool exec_only = false);
};

// The python_script workload's knobs for `script_argv` (SCRIPT ARGS...): the
// script as given, its arguments and its id (SIZE:FNV1A64, when racelab can
// read it from here), as "k=v" flags for CellFlags::knobs.
std::vector<std::string> pyrun_knob_flags(const std::vector<std::string>& script_argv);

// `--python CMD`: the Python that runs real-torch workloads (engine/python_host.h).
// Every command that runs trials takes it; it sets the engine's command (and
// $RACELAB_PYTHON, so shards started by compare inherit it).
void add_python_option(CLI::App& app);

// Runs the cell, printing the first failure of each outcome class unless
// quiet; appends every trial to --results. Returns kGoOn (cli/flags.h) with
// *sum filled, or the exit code of a bad knob, strategy or schedule. A Ctrl-C
// (campaign/interrupt.h) stops it after the trial in flight: kGoOn, with
// *sum the trials that ended and flags.interrupted set.
int run_cell_flags(CellFlags& flags, CellSummary* sum);

// "k=v" flags -> an object; v is parsed as JSON when it is JSON, else a string.
// Throws std::invalid_argument naming the bad flag.
nlohmann::json parse_knobs(const std::vector<std::string>& flags);

// Supervised (a worker process) unless in_process.
TrialRunner make_runner(bool in_process, double timeout_s);

void print_summary(const CellSpec& spec, const CellSummary& sum);

// --schedule-dir and --stop-at-first-failure: the failure-output flags of every
// command that runs one cell (run, exec, pyrun).
void add_failure_output_flags(CLI::App& app, CellFlags& flags);

// -j/--jobs and --no-progress, for run, exec, pyrun and reproduce; keeps the
// command's argv for the part processes -j starts.
void add_parallel_flags(CLI::App& app, CellFlags& flags, int argc, char** argv);

// The tail of those commands: runs the cell, prints its summary, and returns
// the exit code (kExitInterrupted after a Ctrl-C, the summary then of the
// trials so far; kExitExpectationFailed when any trial did not hold, else
// kExitOk, or run_cell_flags' own code for bad input).
int run_cell_and_summarise(CellFlags& flags);

// A schedule file or racelab1: string whose workload, mitigation and knobs
// exist here and whose program is the one here (engine/schedule_fit.h; with
// any_program, any, with a warning); prints the problem (naming the file) and
// returns false when not.
bool load_schedule_or_report(const std::string& file_or_compact, Schedule* out, bool any_program);
// --any-program: replay a schedule made for another program, or naming none.
void add_any_program_flag(CLI::App& app, bool* any_program);
// How racelab prints a warning it goes on after: "racelab: warning: TEXT".
void print_warning(const std::string& text);
// How messages name a schedule argument: its path, or "compact form".
std::string schedule_source(const std::string& file_or_compact);

// After a Ctrl-C: says what the summary above covers, returns kExitInterrupted.
int report_interrupted(const std::string& what_so_far);

// FILE.json -> FILE.min.json (anything else: FILE.min), where minimised schedules go.
std::string minimised_path(const std::string& path);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_CELL_FLAGS_H_
