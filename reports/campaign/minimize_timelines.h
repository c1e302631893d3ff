// reports/campaign/minimize_timelines.h -- minimise the schedules a report draws.
//
// The engine writes a failing trial's schedule as it happened; the report's
// timeline should show the fewest context switches that still fail. For each
// scenario's chosen timeline (a controlled strategy's schedule), this replays
// ddmin (engine/minimize.h) in the supervised worker and saves the survivor
// next to the original as x.min.json, which build_report() then prefers.
#ifndef RACELAB_REPORTS_CAMPAIGN_MINIMIZE_TIMELINES_H_
#define RACELAB_REPORTS_CAMPAIGN_MINIMIZE_TIMELINES_H_

#include <nlohmann/json.hpp>

namespace racelab::reports {

// Returns true if it wrote at least one minimised schedule (rebuild the report).
bool minimize_timelines(const nlohmann::json& report, int64_t max_trials_each = 150);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_CAMPAIGN_MINIMIZE_TIMELINES_H_
