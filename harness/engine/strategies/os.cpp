// os and os+jitter[:P]: free running. No scheduler and so no Strategy: the
// trial runs under engine/free_controller.h, which with jitter yields or
// sleeps at a point with probability P (0.2). The drivers send the same spec
// to every trial: {"kind":"free"}, {"kind":"free","jitter":P}.
#include <stdexcept>

#include <fmt/format.h>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

using nlohmann::json;

void parse_jitter(const std::string& name, const std::string& arg, StrategyName* s) {
  if (arg.empty()) return;
  try {
    s->jitter = std::stod(arg);
  } catch (const std::exception&) {
    s->jitter = -1;
  }
  if (!(s->jitter > 0 && s->jitter <= 1))
    throw std::invalid_argument(fmt::format("strategy '{}': expected a probability in (0,1] after ':'", name));
}

std::unique_ptr<StrategyDriver> make_os_driver(const StrategyName&, int, uint64_t) {
  return same_spec_driver(json{{"kind", "free"}}, false);
}

std::unique_ptr<StrategyDriver> make_jitter_driver(const StrategyName& s, int, uint64_t) {
  return same_spec_driver(json{{"kind", "free"}, {"jitter", s.jitter}}, false);
}

}  // namespace

const StrategyFamily kOsFamily = {"os", StrategyName::Kind::kOs, nullptr, &make_os_driver, nullptr, nullptr};
const StrategyFamily kOsJitterFamily = {"os+jitter[:P]", StrategyName::Kind::kOsJitter, &parse_jitter,
                                        &make_jitter_driver, nullptr, nullptr};

}  // namespace racelab
