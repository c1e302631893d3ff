// engine/driver.h -- the parent-side half of a strategy: turns the user's
// strategy name into one per-trial spec after another, learning across trials.
// The strategy syntax below is parsed here once (parse_strategy); scenario
// files, the command line and reports all go through it. Each strategy, with
// its driver and its name, is defined in its own file
// (engine/strategies/family.h).
//
//   os                 free running, no scheduler
//   os+jitter[:P]      free running, random yield/sleep at a point with probability P (0.2)
//   random             uniform choice at every step
//   pct:D              PCT with depth D; k (steps) = the most steps seen so far (64 before
//                      the first trial), n = the most managed threads seen
//   pos                partial order sampling (strategies/pos.cpp)
//   surw               selectively uniform random walk; its step estimates come from a
//                      calibration trial (the cell's first, a random walk), then from
//                      all the cell's earlier trials
//   dfs:P              depth-first over all schedules with at most P preemptions;
//                      exhausted() once every one was tried (the `complete` verdict)
//   dpor:P             the same classes of schedules as dfs:P, one or a few schedules per
//                      class (strategies/dpor.cpp); exhausted() and classes() likewise
//   auto               a portfolio of kAutoArms: a fixed cycle (kAutoCycle) until the
//                      first failure, Thompson sampling on each arm's failures after it;
//                      every trial's spec names its arm ("via")
//   auto+os            auto with a free-running arm (os) besides: every fourth trial
//                      until the first failure, so a race that shows natively is never
//                      reported as holding because racelab serialised the code (pyrun's
//                      auto); a free trial's failure has no schedule to replay
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

// A strategy name, parsed.
struct StrategyName {
  // Which strategy: one per file of engine/strategies/ that has a name.
  enum class Kind { kOs, kOsJitter, kRandom, kPct, kPos, kSurw, kDfs, kDpor, kAuto, kReplay };
  Kind kind = Kind::kOs;
  int param = 0;        // pct: the depth D; dfs, dpor: the preemption bound P
  double jitter = 0.2;  // os+jitter: the probability P
  std::string replay;   // replay: a schedule file or compact string
  // False for the free-running strategies (os, os+jitter): no scheduler.
  bool controlled() const { return kind != Kind::kOs && kind != Kind::kOsJitter; }
  // dfs:P and dpor:P: searches whose completion proves a bound.
  bool exhaustive() const { return kind == Kind::kDfs || kind == Kind::kDpor; }
};

// Throws std::invalid_argument naming the problem for an unknown or malformed name.
StrategyName parse_strategy(const std::string& name);
// For messages: "os, os+jitter[:P], random, pct:D, pos, surw, dfs:P, dpor:P, auto, auto+os or replay:FILE".
std::string strategy_syntax();
// The strategies `auto` shares its trials among, in order.
extern const char* const kAutoArms[3];
// Indexes into kAutoArms: whose turn each trial is until the cell's first
// failure, round and round. surw has four turns in six, pos and pct:3 one each
// (why these arms and shares: strategies/auto.cpp).
extern const int kAutoCycle[6];
// True for os and os+jitter[:P]; false for anything else, unparseable names
// included. Never throws (reports call it on names read from results files).
bool is_free_running(const std::string& strategy_name);

class StrategyDriver {
 public:
  virtual ~StrategyDriver() = default;
  // The spec for the next trial; false when there is nothing left (dfs done).
  virtual bool next(int64_t trial, nlohmann::json* spec) = 0;
  virtual void observe(const TrialResult& result) { (void)result; }
  virtual bool exhausted() const { return false; }
  // dpor: the classes of equivalent schedules explored; -1 for other strategies.
  virtual int64_t classes() const { return -1; }
  // The PCT guarantee 1/(n*k^(d-1)) for what was learned so far; 0 otherwise.
  virtual double pct_floor() const { return 0; }
  // The depth d, steps k and threads n behind pct_floor(); d = 0 without PCT.
  struct PctParams {
    int d = 0;
    int64_t k = 0;
    int n = 0;
  };
  virtual PctParams pct_params() const { return {}; }
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
// `seed` (the cell's) drives the drivers' own coin flips (surw's interesting
// sets, auto's arm choice), so a cell's trial sequence is reproducible.
std::unique_ptr<StrategyDriver> make_driver(const std::string& strategy_name, int threads, uint64_t seed = 1);

// The PCT floor 1/(n * k^(d-1)).
double pct_floor(int n, int64_t k, int d);

}  // namespace racelab

#endif  // RACELAB_ENGINE_DRIVER_H_
