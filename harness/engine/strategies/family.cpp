#include "engine/strategies/family.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace racelab {

using nlohmann::json;

void bad_spec(const std::string& field, const std::string& expected, const json& got) {
  throw std::invalid_argument(fmt::format("strategy spec: field '{}': expected {}, got {}", field, expected,
                                          got.is_null() ? std::string("nothing") : got.dump()));
}

int parse_int_arg(const std::string& name, const std::string& text, int min, int max) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < min || v > max)
    throw std::invalid_argument(
        fmt::format("strategy '{}': expected an integer from {} to {} after ':', got '{}'", name, min, max, text));
  return v;
}

namespace {

class SameSpecDriver : public StrategyDriver {
 public:
  SameSpecDriver(json spec, bool controlled) : spec_(std::move(spec)) { controlled_ = controlled; }
  bool next(int64_t, json* spec) override {
    *spec = spec_;
    return true;
  }

 private:
  json spec_;
};

}  // namespace

std::unique_ptr<StrategyDriver> same_spec_driver(json spec, bool controlled) {
  return std::make_unique<SameSpecDriver>(std::move(spec), controlled);
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace racelab
