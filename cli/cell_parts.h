// cli/cell_parts.h -- `-j N` for one cell (run, exec, pyrun, reproduce): the
// cell's trials over N processes of this binary, each running one part of it
// (engine/trial_plan.h: blocks of trials dealt over the parts). A trial
// depends on its index alone, so `-j 1` and `-j N` give the same trials,
// trial for trial; with --stop-at-first-failure the first failure found stops
// every part, which may then be another trial than one process would stop at.
//
// The parent starts the parts with the same command line and the part in the
// environment (RACELAB_PART=k/n, RACELAB_PART_DIR), so no flag is rewritten;
// each part writes its records and its summary there, and the parent reads
// them back when all have ended. A Ctrl-C reaches every part (one process
// group) and each stops after its trial in flight, as one process would.
#ifndef RACELAB_CLI_CELL_PARTS_H_
#define RACELAB_CLI_CELL_PARTS_H_

#include <string>
#include <vector>

#include "engine/cell.h"

namespace racelab::cli {

// In a part process: the part it runs and the folder its output goes to.
// False in any other process.
bool part_from_environment(CellPart* part, std::string* dir);

// A part's output files in `dir`.
std::string part_results_path(const std::string& dir, int index);
std::string part_summary_path(const std::string& dir, int index);
void write_part_summary(const std::string& path, const CellSummary& sum);

// What the parent gets back: every record, in trial order, and the summary
// of the whole cell.
struct PartsResult {
  std::vector<TrialRecord> records;
  CellSummary summary;
  bool interrupted = false;
};

// Runs `argv` (the command's own argv: argv[0] is "racelab CMD") as `jobs`
// part processes and gathers them. `progress`: a live line on stderr from the
// parts' records as they come. Returns kGoOn (cli/flags.h) with *out filled,
// or the exit code of a part that refused its input (2, 3), its output shown.
int run_in_parts(const std::vector<std::string>& argv, int jobs, const CellSpec& spec, bool progress,
                 PartsResult* out);

// The live progress line of a cell: trials done of the budget, failures,
// trials/s and the time left; on a terminal only, off with --no-progress.
class CellProgress {
 public:
  CellProgress(bool on, int64_t budget);
  void update(int64_t trials, int64_t failures);
  void done();

 private:
  bool on_;
  int64_t budget_;
  double start_s_, last_s_ = -1;
};

}  // namespace racelab::cli

#endif  // RACELAB_CLI_CELL_PARTS_H_
