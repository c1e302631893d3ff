// Test helpers for the scenario validator's output (campaign/scenario.h):
// whether a problem was reported at a JSON path, and every problem as text for a
// failing assertion's message. Shared by the schema and exec-section tests.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "campaign/scenario.h"

namespace racelab::reports::test_support {

using campaign::Problem;

// True when some problem sits at `path` and its "expected" text contains `expected_part`.
inline bool has(const std::vector<Problem>& ps, const std::string& path, const std::string& expected_part = "") {
  return std::any_of(ps.begin(), ps.end(), [&](const Problem& p) {
    return p.path == path && p.expected.find(expected_part) != std::string::npos;
  });
}

// Every problem, one per line.
inline std::string all(const std::vector<Problem>& ps) {
  std::string s;
  for (const auto& p : ps) s += p.to_string() + "\n";
  return s;
}

}  // namespace racelab::reports::test_support
