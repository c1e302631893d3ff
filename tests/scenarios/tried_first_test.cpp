// The catalogue's "what people try first" rows (lock_first_call, module_shim,
// patch_check, disable_check): every scenario that sweeps one sweeps all four,
// module_shim is expected to fail exactly where and how none fails, and
// patch_check never expects the flag error it removes. The verdicts themselves
// are measured by `racelab ci` (scenario.* tests); this keeps the catalogue
// from drifting away from what the two mitigations are.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "campaign/scenario.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

std::vector<Scenario> catalogue() {
  std::vector<Problem> problems;
  auto s = load_scenarios({std::string(RACELAB_SOURCE_DIR) + "/scenarios"}, nullptr, &problems);
  for (const auto& p : problems) ADD_FAILURE() << p.to_string();
  return s;
}

bool sweeps(const Scenario& s, const std::string& m) {
  return std::find(s.mitigations.begin(), s.mitigations.end(), m) != s.mitigations.end();
}

// The expectation as written, without its explanation.
nlohmann::json clauses(const Expectation& e) {
  nlohmann::json j = e.source;
  j.erase("why");
  return j;
}

TEST(TriedFirst, EveryScenarioWithOneSweepsAllFour) {
  int with = 0;
  for (const auto& s : catalogue()) {
    // disable_check has a meaning beyond the capture flag (cuda_graph_capture: the
    // relaxed capture mode), so it may be swept alone; any of the other three
    // brings all four.
    const bool any = sweeps(s, "lock_first_call") || sweeps(s, "module_shim") || sweeps(s, "patch_check");
    if (!any) continue;
    ++with;
    for (const char* m : {"lock_first_call", "module_shim", "patch_check", "disable_check"})
      EXPECT_TRUE(sweeps(s, m)) << s.file << " does not sweep " << m;
  }
  EXPECT_GE(with, 9);  // every scenario but te_fuser_crash
}

TEST(TriedFirst, ModuleShimFailsExactlyWhereAndHowNoneFails) {
  for (const auto& s : catalogue()) {
    const Expectation* shim = s.expectation_for("module_shim");
    const Expectation* none = s.expectation_for("none");
    if (shim == nullptr) continue;
    ASSERT_NE(none, nullptr) << s.file;
    EXPECT_EQ(clauses(*shim), clauses(*none)) << s.file;
    // The report row says why the shim has no effect.
    EXPECT_NE(shim->why.find("__globals__"), std::string::npos) << s.file << ": " << shim->why;
  }
}

TEST(TriedFirst, PatchCheckNeverExpectsTheFlagError) {
  for (const auto& s : catalogue()) {
    const Expectation* e = s.expectation_for("patch_check");
    if (e == nullptr) continue;
    EXPECT_NE(e->outcome, "error") << s.file;
    EXPECT_EQ(std::find(e->allowed.begin(), e->allowed.end(), "error"), e->allowed.end()) << s.file;
    EXPECT_FALSE(e->why.empty()) << s.file;
  }
}

}  // namespace
}  // namespace racelab::reports
