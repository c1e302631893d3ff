// random: at every step, a uniform choice among the runnable threads. The
// driver sends {"kind":"random"} to every trial; the trial seed is the walk.
#include <random>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

using nlohmann::json;

class RandomStrategy : public Strategy {
 public:
  explicit RandomStrategy(uint64_t seed) : rng_(mix_seed(seed, 0x52414e44)) {}
  int choose(const ChoiceContext& ctx, std::string*) override {
    std::uniform_int_distribution<size_t> pick(0, ctx.runnable->size() - 1);
    return (*ctx.runnable)[pick(rng_)];
  }

 private:
  std::mt19937_64 rng_;
};

std::unique_ptr<Strategy> make_random_strategy(const json&, uint64_t seed) {
  return std::make_unique<RandomStrategy>(seed);
}

std::unique_ptr<StrategyDriver> make_random_driver(const StrategyName&, int, uint64_t) {
  return same_spec_driver(json{{"kind", "random"}}, true);
}

}  // namespace

const StrategyFamily kRandomFamily = {"random", StrategyName::Kind::kRandom, nullptr, &make_random_driver,
                                      "random", &make_random_strategy};

}  // namespace racelab
