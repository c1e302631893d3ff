// campaign/minimize_timelines.h -- minimise the schedules a report draws.
//
// The engine writes a failing trial's schedule as it happened; the report's
// timeline should show the fewest context switches that still fail. For each
// scenario's chosen timeline (a controlled strategy's schedule), this replays
// ddmin (engine/minimize.h) in the supervised worker and saves the survivor
// next to the original as x.min.json, which build_report() then prefers.
#ifndef RACELAB_CAMPAIGN_MINIMIZE_TIMELINES_H_
#define RACELAB_CAMPAIGN_MINIMIZE_TIMELINES_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace racelab::campaign {

// Where the minimised version of a schedule file lives (x.json -> x.min.json).
// The report draws the minimised schedule when that file exists.
std::string minimized_schedule_path(const std::string& schedule_file);

// `report` is the report model (reports/report.h, build_report) of the
// campaign's results. Returns true if it wrote at least one minimised schedule (rebuild the report).
bool minimize_timelines(const nlohmann::json& report, int64_t max_trials_each = 150);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_MINIMIZE_TIMELINES_H_
