// engine/strategies/family.h -- what one strategy file provides, and the one
// list of them. A strategy has two halves:
//  - the trial's (engine/strategy.h): who runs next at each step of ONE
//    trial, made from a JSON spec, with no memory of other trials. It runs
//    wherever trials run: a worker, the program under test (harness/preload/),
//    a Python host (harness/host/);
//  - the parent's (engine/driver.h): the user's name for it ("pct:3") and the
//    StrategyDriver that writes each trial's spec, learning across trials.
// Each file of this folder holds one strategy with both its halves, or one
// half where the other is not its own:
//
//   file         name(s)           trial spec kind   driver
//   os.cpp       os, os+jitter     (none: free running, engine/free_controller.h)
//   random.cpp   random            random            the same spec every trial
//   pct.cpp      pct:D             pct               learns k and n
//   pos.cpp      pos               pos               the same spec every trial
//   surw.cpp     surw              surw              estimates, interesting sets
//   dfs.cpp      dfs:P             follow            depth-first over prefixes
//   dpor.cpp     dpor:P            (dfs's follow)    partial-order reduction
//   auto.cpp     auto, auto+os     (its arms')       a portfolio of drivers
//   replay.cpp   replay:FILE       replay            one schedule, every trial
//   preempt.cpp  (none)            preempt           (minimisation writes its specs)
//
// Besides them: follow.h, the follow-a-list Strategy that dfs, dpor and
// replay share; family.cpp, the helpers below; families.cpp, the list.
//
// Adding a strategy: a file here that defines its StrategyFamily, one line in
// strategies/families.cpp, and, for a name, its StrategyName::Kind
// (engine/driver.h). Each file's comment says what the strategy does and why.
#ifndef RACELAB_ENGINE_STRATEGIES_FAMILY_H_
#define RACELAB_ENGINE_STRATEGIES_FAMILY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/driver.h"
#include "engine/strategy.h"

namespace racelab {

struct StrategyFamily {
  // The parent's half. `syntax` is the name as messages show it ("pct:D",
  // "os+jitter[:P]", "auto"): the name is what comes before '[' or ':', and
  // with a ':' it takes an argument after one ("[:": optionally). nullptr: no
  // name (a spec kind that only racelab itself writes).
  const char* syntax = nullptr;
  StrategyName::Kind kind = StrategyName::Kind::kOs;
  // Reads the argument ("" when there is none) into *s, throwing
  // std::invalid_argument naming the problem; nullptr: nothing to read.
  void (*parse)(const std::string& name, const std::string& arg, StrategyName* s) = nullptr;
  std::unique_ptr<StrategyDriver> (*make_driver)(const StrategyName& s, int threads, uint64_t seed) = nullptr;

  // The trial's half: the spec "kind" it runs, and the Strategy for one such
  // spec and trial seed (throwing std::invalid_argument via bad_spec for a bad
  // one). nullptr: none of its own.
  const char* spec_kind = nullptr;
  std::unique_ptr<Strategy> (*make_strategy)(const nlohmann::json& spec, uint64_t seed) = nullptr;
};

// Every family, in the order messages list them (strategies/families.cpp).
const std::vector<const StrategyFamily*>& strategy_families();

// One line each in strategies/families.cpp; defined in the files above.
extern const StrategyFamily kOsFamily, kOsJitterFamily, kRandomFamily, kPctFamily, kPosFamily, kSurwFamily,
    kDfsFamily, kDporFamily, kAutoFamily, kAutoOsFamily, kReplayFamily, kPreemptFamily;

// For the files above (strategies/family.cpp).

// Throws std::invalid_argument: "strategy spec: field 'F': expected E, got G".
[[noreturn]] void bad_spec(const std::string& field, const std::string& expected, const nlohmann::json& got);

// The integer after the ':' of `name`, from min to max; throws
// std::invalid_argument naming the range otherwise. The bounds keep a typo
// from becoming a search that never ends.
int parse_int_arg(const std::string& name, const std::string& text, int min, int max);

// A driver that sends `spec` to every trial and learns nothing; `controlled`:
// a scheduler runs the trial (false: free running).
std::unique_ptr<StrategyDriver> same_spec_driver(nlohmann::json spec, bool controlled);

// Whether `v` holds `x`.
bool contains(const std::vector<int>& v, int x);

}  // namespace racelab

#endif  // RACELAB_ENGINE_STRATEGIES_FAMILY_H_
