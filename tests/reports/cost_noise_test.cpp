// Costs say their noise: a ratio to the ideal comes with twice its standard
// error, a difference inside it reads "same within noise", and too few trials
// say the noise is unknown -- in the JSON and in every rendering.
#include <cmath>

#include <gtest/gtest.h>

#include "fixtures.h"
#include "reports/report.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::toy_results;

// The toy campaign with `none` as the ideal, measured in its random cells
// (100 steps/s in every trial); global_lock's metric from `metric(trial)`.
template <class F>
json report_with(F metric) {
  ResultsData d = toy_results(make_temp_dir());
  d.headers[0]["scenarios"][0]["cost"] = {{"ideal", "none"}, {"strategy", "random"}};
  for (auto& t : d.trials)
    if (t.mitigation == "global_lock") {
      const json v = metric(t.trial);
      if (v.is_null())
        t.metrics.erase("steps_per_s");
      else
        t.metrics["steps_per_s"] = v;
    }
  return build_report(d);
}

const json& lock_cost(const json& r) { return r["scenarios"][0]["mitigations"][1]["cost"]; }

TEST(CostNoise, AClearDifferenceIsNamed) {
  const json r = report_with([](int64_t) { return json(50.0); });
  EXPECT_DOUBLE_EQ(lock_cost(r)["relative"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(lock_cost(r)["relative_noise"].get<double>(), 0.0);
  EXPECT_EQ(lock_cost(r)["comparison"], "lower than the ideal");
}

TEST(CostNoise, ARatioInsideItsNoiseReadsSameWithinNoise) {
  // Mean 130 (1.30x the ideal), but the trials swing between 40 and 220.
  const json r = report_with([](int64_t t) { return json(t % 2 ? 220.0 : 40.0); });
  const json& c = lock_cost(r);
  EXPECT_NEAR(c["relative"].get<double>(), 1.3, 1e-9);
  // sd of {40, 220} x 10 is 94.87; twice the standard error of the ratio over 10 trials per thread count,
  // averaged over the two thread counts: 2 * 1.3 * (94.87 / sqrt(10) / 130) / sqrt(2).
  EXPECT_NEAR(c["relative_noise"].get<double>(), 2 * 1.3 * (94.8683 / std::sqrt(10.0) / 130) / std::sqrt(2.0), 1e-3);
  EXPECT_EQ(c["comparison"], "same within noise");
  EXPECT_NE(render_markdown(r).find("| 1.30 ± 0.42 | same within noise |"), std::string::npos) << render_markdown(r);
  EXPECT_NE(render_html(r).find("(same within noise)"), std::string::npos);
  EXPECT_NE(render_junit(r).find("same within noise"), std::string::npos);
}

TEST(CostNoise, OneTrialPerCellHasNoKnownNoise) {
  const json r = report_with([](int64_t t) { return t == 0 ? json(60.0) : json(nullptr); });
  const json& c = lock_cost(r);
  EXPECT_TRUE(c["relative_noise"].is_null());
  EXPECT_EQ(c["comparison"], "noise unknown (fewer than 2 trials)");
}

}  // namespace
}  // namespace racelab::reports
