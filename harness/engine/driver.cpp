#include "engine/driver.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

// The name in a family's syntax: "pct" of "pct:D", "os+jitter" of "os+jitter[:P]".
std::string name_of(const StrategyFamily& f) {
  const std::string syntax = f.syntax;
  return syntax.substr(0, syntax.find_first_of("[:"));
}

// The family that `name` names; throws std::invalid_argument for none.
// A name that takes an argument ("pct:D", "os+jitter[:P]") is matched before
// its ':'; any other must be the whole name: "pos:1" is no strategy.
const StrategyFamily& family_of(const std::string& name) {
  const std::string head = name.substr(0, name.find(':'));
  for (const StrategyFamily* f : strategy_families()) {
    if (f->syntax == nullptr) continue;
    const bool takes_arg = std::string(f->syntax).find(':') != std::string::npos;
    if ((takes_arg ? head : name) == name_of(*f)) return *f;
  }
  throw std::invalid_argument(fmt::format("unknown strategy '{}' (expected {})", name, strategy_syntax()));
}

StrategyName parse_with(const StrategyFamily& f, const std::string& name) {
  const size_t colon = name.find(':');
  StrategyName s;
  s.kind = f.kind;
  if (f.parse != nullptr) f.parse(name, colon == std::string::npos ? "" : name.substr(colon + 1), &s);
  return s;
}

}  // namespace

std::string strategy_syntax() {
  std::vector<std::string> names;
  for (const StrategyFamily* f : strategy_families())
    if (f->syntax != nullptr) names.push_back(f->syntax);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

StrategyName parse_strategy(const std::string& name) { return parse_with(family_of(name), name); }

bool is_free_running(const std::string& strategy_name) {
  try {
    return !parse_strategy(strategy_name).controlled();
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::unique_ptr<StrategyDriver> make_driver(const std::string& name, int threads, uint64_t seed) {
  const StrategyFamily& f = family_of(name);
  return f.make_driver(parse_with(f, name), threads, seed);
}

}  // namespace racelab
