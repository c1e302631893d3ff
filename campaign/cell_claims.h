// campaign/cell_claims.h -- local shards that share one list of cells.
//
// `racelab compare` runs one shard per core on this machine. A fixed split
// (cell k to shard k mod n, matrix.h) leaves a core idle at the end whenever
// one shard's cells happen to cost more: the trainer's cells cost seconds a
// trial, a micro workload's milliseconds. Local shards instead take cells from
// one list, the costliest first, each claiming the next unclaimed cell through
// a counter in a file that every shard locks (flock) to advance: a shard that
// finishes a cell early takes the next one, so the cores run out of work
// together, give or take one cell from the end of the list, the cheapest.
//
// Only for shards of one machine (the parent passes the file); `--shard i/n`
// across machines keeps the fixed split, which needs no shared file.
#ifndef RACELAB_CAMPAIGN_CELL_CLAIMS_H_
#define RACELAB_CAMPAIGN_CELL_CLAIMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "campaign/matrix.h"

namespace racelab::campaign {

// A cell's estimated cost, in trial-thread units: its trial budget times its
// thread count, times how much dearer a trial of its workload is than a micro
// workload's (the trainer's: a short training run per trial, about 60x).
double estimated_cell_cost(const PlannedCell& cell);

// The cells, costliest first (ties: plan order), the order the shards claim in.
std::vector<PlannedCell> order_by_cost(std::vector<PlannedCell> cells);

// The shared counter. next() returns 0, 1, 2, ... across every process that
// opened the same file, each number once; throws std::runtime_error when the
// file cannot be opened or locked.
class CellClaims {
 public:
  explicit CellClaims(std::string path);
  int64_t next();

 private:
  std::string path_;
};

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_CELL_CLAIMS_H_
