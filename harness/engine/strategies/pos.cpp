// pos -- partial order sampling (Yuan, Yang, Gu, CAV 2018). Every pending step
// has a random priority and the highest-priority runnable step runs. Once a
// step ran, its thread's next step and every waiting step that races with the
// one that ran (engine/strategy.h dependent()) draw fresh priorities;
// independent steps keep theirs. So the relative order of independent steps
// is left alone and each ordering of racing steps is sampled about evenly,
// where a random walk over-samples the orders that many independent steps
// reach by chance. With no objects named every step races with every other
// and POS is a random walk. A polling thread (its pending step is a yield or
// a sleep) draws its priority below every working thread's, so pollers run
// when nothing else can, in a random order among themselves. The driver
// sends {"kind":"pos"} to every trial.
#include <random>
#include <vector>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

using nlohmann::json;

class PosStrategy : public Strategy {
 public:
  explicit PosStrategy(uint64_t seed) : rng_(mix_seed(seed, 0x504f53)) {}
  int choose(const ChoiceContext& ctx, std::string*) override {
    const std::vector<Footprint>& fp = *ctx.footprints;
    if (last_ >= 0) {
      fresh(last_);
      for (int t : *ctx.runnable)
        if (t != last_ && static_cast<size_t>(t) < fp.size() && dependent(fp[t], last_fp_)) fresh(t);
    }
    if (ctx.requester_yielded) lower(ctx.requester);
    for (int t : *ctx.runnable)
      if (is_polling(ctx, t) && (static_cast<size_t>(t) >= priorities_.size() || priorities_[t] >= -1.0)) lower(t);
    if (int t = starved_thread(ctx); t >= 0) {
      last_ = t;
      last_fp_ = static_cast<size_t>(t) < fp.size() ? fp[t] : Footprint{};
      return t;
    }
    int best = -1;
    for (int t : *ctx.runnable) {
      if (static_cast<size_t>(t) >= priorities_.size() || (priorities_[t] < 0 && priorities_[t] >= -1.0)) fresh(t);
      if (best < 0 || priorities_[t] > priorities_[best]) best = t;
    }
    last_ = best;
    last_fp_ = static_cast<size_t>(best) < fp.size() ? fp[best] : Footprint{};
    return best;
  }

 private:
  void fresh(int t) {
    if (static_cast<size_t>(t) >= priorities_.size()) priorities_.resize(t + 1, -1.0);
    priorities_[t] = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
  void lower(int t) {  // below every fresh draw, still random among the lowered
    if (static_cast<size_t>(t) >= priorities_.size()) priorities_.resize(t + 1, -1.0);
    priorities_[t] = std::uniform_real_distribution<double>(-2.0, -1.0)(rng_);
  }
  std::mt19937_64 rng_;
  std::vector<double> priorities_;  // per thread, for its pending step; -1: none drawn yet; < -1: lowered (polls)
  int last_ = -1;
  Footprint last_fp_;
};

std::unique_ptr<Strategy> make_pos_strategy(const json&, uint64_t seed) { return std::make_unique<PosStrategy>(seed); }

std::unique_ptr<StrategyDriver> make_pos_driver(const StrategyName&, int, uint64_t) {
  return same_spec_driver(json{{"kind", "pos"}}, true);
}

}  // namespace

const StrategyFamily kPosFamily = {"pos", StrategyName::Kind::kPos, nullptr, &make_pos_driver, "pos",
                                   &make_pos_strategy};

}  // namespace racelab
