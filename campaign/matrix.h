// campaign/matrix.h -- a campaign's cells: scenario x mitigation x threads x strategy x seed.
//
// The order is fixed (scenarios as loaded, then the scenario's own list order),
// so `--shard i/n` on different machines partitions the same list: cell k goes
// to shard k mod n. Round-robin rather than contiguous blocks spreads the
// expensive scenarios (the trainer) over every shard.
// `racelab compare`'s shards on one machine do not split the list this way:
// they claim cells from it, costliest first (cell_claims.h).
#ifndef RACELAB_CAMPAIGN_MATRIX_H_
#define RACELAB_CAMPAIGN_MATRIX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "campaign/scenario.h"
#include "engine/cell.h"

namespace racelab::campaign {

struct PlannedCell {
  size_t index = 0;       // position in the full (unsharded) campaign
  size_t scenario = 0;    // index into the scenario list
  CellSpec spec;
};

struct PlanOptions {
  double budget_scale = 1.0;  // multiplies every strategy's trials and seconds
  bool ci = false;            // stop each cell at its first failure (enough to decide)
  std::string schedule_dir;   // where the engine writes failing schedules
};

// A `reproduces_within` cell is decided at its first failure; outside ci it
// still runs at least this many trials (or its whole budget, if smaller), so
// the failure rate the report shows rests on more than one trial.
inline constexpr int64_t kRateTrials = 10;

// Scaled trials: ceil(trials * scale), at least 1. A cell that a reproduces_within
// clause matches always gets at least that many trials, so scaling never makes a
// reproduction expectation unfair; such a raised cell stops at its first failure.
std::vector<PlannedCell> plan_cells(const std::vector<Scenario>& scenarios, const PlanOptions& options);

struct Shard {
  int index = 0;  // 0-based
  int count = 1;
};
// Parses "i/n" (1-based i, 1 <= i <= n); false on malformed input.
bool parse_shard(const std::string& text, Shard* shard);
// Shard i of n: part i of every cell that has trials in it (engine/trial_plan.h):
// a cell's blocks of trials are dealt over the shards, starting at the
// cell's place in the plan, so one costly cell spreads over every shard and
// cells of one block spread as whole cells. The shards' trials together are
// one machine's, trial for trial (each trial depends on its index alone).
std::vector<PlannedCell> select_shard(const std::vector<PlannedCell>& cells, const Shard& shard);

// "holds_over N" scaled like the budgets: ceil(N * scale), at least 1.
int64_t scaled_count(int64_t n, double scale);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_MATRIX_H_
