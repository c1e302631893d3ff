#include "engine/trial_plan.h"

#include <algorithm>

#include "engine/driver.h"

namespace racelab {

bool is_one_sequence(const std::string& strategy) {
  try {
    return parse_strategy(strategy).exhaustive();
  } catch (...) {
    return false;  // not a strategy: run_cell refuses it with its own message
  }
}

int64_t block_of(int64_t trial, bool one_sequence) { return one_sequence ? 0 : trial / kTrialBlock; }

bool part_runs(const CellPart& part, int64_t trial, bool one_sequence) {
  if (part.count <= 1) return true;
  const uint64_t b = static_cast<uint64_t>(block_of(trial, one_sequence));
  return static_cast<int>((part.offset + b) % static_cast<uint64_t>(part.count)) == part.index;
}

bool part_has_trials(const CellPart& part, int64_t max_trials, bool one_sequence) {
  if (part.count <= 1) return true;
  // The blocks 0..blocks-1 go to parts offset, offset+1, ... (mod count): this
  // part has one when its distance from the offset is below the block count.
  const uint64_t n = static_cast<uint64_t>(part.count);
  const uint64_t distance = (static_cast<uint64_t>(part.index) + n - part.offset % n) % n;
  return static_cast<int64_t>(distance) < parts_with_trials(part, max_trials, one_sequence);
}

int parts_with_trials(const CellPart& part, int64_t max_trials, bool one_sequence) {
  if (part.count <= 1 || max_trials <= 0) return 1;
  const int64_t blocks = one_sequence ? 1 : (max_trials + kTrialBlock - 1) / kTrialBlock;
  return static_cast<int>(std::min<int64_t>(blocks, part.count));
}

}  // namespace racelab
