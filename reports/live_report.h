// reports/live_report.h -- a campaign's report, rewritten as the campaign runs.
//
//   reports::LiveReport live;
//   options.report = reports::live_report(&live, options.out_dir, junit_path);
//   campaign::run_campaign(scenarios, options, runner);
//   // live.report: the report model; live.files: what was written
//
// The campaign (campaign/campaign.h) renders nothing: it hands the results it
// has so far to the writer it is given. This writer builds the report from
// them and writes report.{json,md,html} atomically each time, and JUnit XML
// only with the final report.
#ifndef RACELAB_REPORTS_LIVE_REPORT_H_
#define RACELAB_REPORTS_LIVE_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "campaign/campaign.h"
#include "reports/report.h"

namespace racelab::reports {

struct LiveReport {
  nlohmann::json report;  // the last report built
  ReportFiles files;      // the files it was written to
};

// `into` must outlive the campaign.
campaign::ReportWriter live_report(LiveReport* into, const std::string& out_dir, const std::string& junit_path = "");

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_LIVE_REPORT_H_
