// The one list of strategies (engine/strategies/family.h). Its order is the
// order of the names in strategy_syntax() and of the spec kinds in
// make_strategy's: a new strategy goes where it should read.
#include "engine/strategies/family.h"

namespace racelab {

const std::vector<const StrategyFamily*>& strategy_families() {
  static const std::vector<const StrategyFamily*> families = {
      &kOsFamily,
      &kOsJitterFamily,
      &kRandomFamily,
      &kPctFamily,
      &kPosFamily,
      &kSurwFamily,
      &kDfsFamily,
      &kDporFamily,
      &kAutoFamily,
      &kAutoOsFamily,
      &kReplayFamily,
      &kPreemptFamily,
  };
  return families;
}

}  // namespace racelab
