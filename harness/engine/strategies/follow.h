// engine/strategies/follow.h -- a Strategy that follows a recorded list of
// threads: the trial half of dfs and dpor (a prefix, then never preempt:
// strategies/dfs.cpp) and of replay (every decision, checked:
// strategies/replay.cpp).
#ifndef RACELAB_ENGINE_STRATEGIES_FOLLOW_H_
#define RACELAB_ENGINE_STRATEGIES_FOLLOW_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/strategy.h"

namespace racelab {

struct FollowStep {
  int thread;
  std::string point;    // empty: not checked
  bool let_go = false;  // the recorded run let its requester go here (time, not the program)
};

// Not strict: past the steps, the non-preemptive default (default_choice).
// Strict: a run that asks for a step past them, reaches one where the
// recorded run was let go (or the other way round), cannot choose the thread
// or finds it at another point diverges: choose() returns -1 saying why.
std::unique_ptr<Strategy> make_follow_strategy(std::vector<FollowStep> steps, bool strict);

}  // namespace racelab

#endif  // RACELAB_ENGINE_STRATEGIES_FOLLOW_H_
