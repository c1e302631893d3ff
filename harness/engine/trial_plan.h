// engine/trial_plan.h -- the rule that lets one cell's trials be spread over
// processes and machines: a trial's outcome depends on its index alone.
//
// A cell's trials are numbered 0, 1, ... and grouped in blocks of consecutive
// indices. A trial's seed is mix_seed(cell seed, index). A strategy that
// learns across trials (pct's step count, surw's estimates, auto's choice of
// arm) learns within a block only: its driver starts afresh at each block's
// first trial, and its blocks are kLearningBlock trials long. A strategy that
// learns nothing (random, pos, os, os+jitter, replay) has blocks of one
// trial. So a trial is a function of its index and of the earlier trials of
// its block, wherever and whenever the block runs, and the parts of a cell
// run apart are, together, the cell run whole, trial for trial. The
// exhaustive searches (dfs:P, dpor:P) are one sequence that cannot be cut:
// their cell is one block, whatever its size.
//
// A part (CellPart, engine/cell.h) takes the blocks b with
// (offset + b) % count == index. Shard i of n runs part i of every cell, with
// the cell's place in the plan as the offset, so cells of a single block
// still spread over the shards as whole cells.
#ifndef RACELAB_ENGINE_TRIAL_PLAN_H_
#define RACELAB_ENGINE_TRIAL_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/cell.h"

namespace racelab {

inline constexpr int64_t kLearningBlock = 32;

// The block length of a strategy's trials: kLearningBlock for one that
// learns, 1 for one that does not, 0 for one sequence (dfs:P, dpor:P). An
// unknown name is 1: run_cell refuses it with its own message.
int64_t trial_block(const std::string& strategy);

// The block of `trial` (0 for every trial of one sequence).
int64_t block_of(int64_t trial, int64_t block);

// Whether `part` runs `trial`.
bool part_runs(const CellPart& part, int64_t trial, int64_t block);

// Whether `part` has any trial of a cell of `max_trials` trials.
bool part_has_trials(const CellPart& part, int64_t max_trials, int64_t block);

// How many parts of a cell of `max_trials` trials have any trial at all
// (a cell of 3 blocks over 4 shards has 3): a merge knows a cell is whole
// when it has seen that many.
int parts_with_trials(const CellPart& part, int64_t max_trials, int64_t block);

// auto's notes of a cell's parts ("auto: surw 3/20 pos 0/5 pct:3 1/5
// (failures/trials per strategy)", engine/cell.cpp), added up arm by arm
// into the whole cell's; "" when they are not all such notes.
std::string add_up_portfolio_notes(const std::vector<std::string>& notes);

}  // namespace racelab

#endif  // RACELAB_ENGINE_TRIAL_PLAN_H_
