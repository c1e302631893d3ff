#include "engine/outcome.h"

#include <fmt/format.h>

namespace racelab {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kHolds: return "holds";
    case Outcome::kSilentFallback: return "silent_fallback";
    case Outcome::kError: return "error";
    case Outcome::kWrongResult: return "wrong_result";
    case Outcome::kStuckState: return "stuck_state";
    case Outcome::kDataRace: return "data_race";
    case Outcome::kDivergence: return "divergence";
    case Outcome::kHang: return "hang";
    case Outcome::kCrash: return "crash";
    case Outcome::kInfrastructure: return "infrastructure";
  }
  return "unknown";
}

const std::vector<Outcome>& all_outcomes() {
  static const std::vector<Outcome> all = {Outcome::kHolds,     Outcome::kSilentFallback, Outcome::kError,
                                           Outcome::kWrongResult, Outcome::kStuckState,   Outcome::kDataRace,
                                           Outcome::kDivergence, Outcome::kHang,          Outcome::kCrash,
                                           Outcome::kInfrastructure};
  return all;
}

bool is_failure(const std::string& outcome_name) {
  Outcome o;
  // An unknown name (a newer racelab's class) counts as a failure: never as a pass.
  return !parse_outcome(outcome_name, &o) || is_failure(o);
}

bool is_conclusive(const std::string& outcome_name) {
  return outcome_name != racelab::outcome_name(Outcome::kInfrastructure);
}

std::string failure_class_list() {
  std::vector<std::string> names;
  for (Outcome o : all_outcomes())
    if (is_failure(o)) names.emplace_back(outcome_name(o));
  const std::string last = names.back();
  names.pop_back();
  return fmt::format("{} or {}", fmt::join(names, ", "), last);
}

bool parse_outcome(const std::string& name, Outcome* out) {
  for (Outcome o : all_outcomes()) {
    if (name == outcome_name(o)) {
      *out = o;
      return true;
    }
  }
  return false;
}

Outcome classify_observation(const Observation& obs, std::string* detail) {
  if (!obs.stuck_state.empty()) {
    *detail = obs.stuck_state;
    return Outcome::kStuckState;
  }
  if (!obs.wrong_result.empty()) {
    *detail = obs.wrong_result;
    return Outcome::kWrongResult;
  }
  if (!obs.errors.empty()) {
    *detail = obs.errors.front();
    if (obs.errors.size() > 1) *detail += fmt::format(" (+{} more)", obs.errors.size() - 1);
    return Outcome::kError;
  }
  if (obs.silent_fallbacks > 0) {
    *detail = fmt::format("{} compiled call(s) ran the eager path", obs.silent_fallbacks);
    return Outcome::kSilentFallback;
  }
  detail->clear();
  return Outcome::kHolds;
}

}  // namespace racelab
