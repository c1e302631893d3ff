// engine/driver.h -- the parent-side half of a strategy: turns the user's
// strategy name into one per-trial spec after another, learning across trials.
//
//   os                 free running, no scheduler
//   os+jitter[:P]      free running, random yield/sleep at a point with probability P (0.2)
//   random             uniform choice at every step
//   pct:D              PCT with depth D; k (steps) = the most steps seen so far (64 before
//                      the first trial), n = the most managed threads seen
//   dfs:P              depth-first over all schedules with at most P preemptions;
//                      exhausted() once every one was tried (the `complete` verdict)
//   replay:FILE|STRING every trial follows the schedule exactly
//
// Workers run each spec without memory of earlier trials (engine/strategy.h),
// so a crashed worker never loses search state.
#ifndef RACELAB_ENGINE_DRIVER_H_
#define RACELAB_ENGINE_DRIVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/schedule.h"
#include "engine/trial.h"

namespace racelab {

class StrategyDriver {
 public:
  virtual ~StrategyDriver() = default;
  // The spec for the next trial; false when there is nothing left (dfs done).
  virtual bool next(int64_t trial, nlohmann::json* spec) = 0;
  virtual void observe(const TrialResult& result) { (void)result; }
  virtual bool exhausted() const { return false; }
  // The PCT guarantee 1/(n*k^(d-1)) for what was learned so far; 0 otherwise.
  virtual double pct_floor() const { return 0; }
  // A replay pins the workload's seed to the schedule's.
  virtual std::optional<uint64_t> fixed_seed() const { return std::nullopt; }
  // Why the verdict is weaker than it looks (e.g. dfs saw nondeterminism).
  virtual std::string note() const { return ""; }
  bool controlled() const { return controlled_; }

 protected:
  bool controlled_ = true;
};

// Throws std::invalid_argument naming the problem for an unknown or malformed
// name; ScheduleError for a bad replay file or string.
std::unique_ptr<StrategyDriver> make_driver(const std::string& strategy_name, int threads);

// The PCT floor 1/(n * k^(d-1)).
double pct_floor(int n, int64_t k, int d);

}  // namespace racelab

#endif  // RACELAB_ENGINE_DRIVER_H_
