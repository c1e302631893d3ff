#include "reports/live_report.h"

namespace racelab::reports {

campaign::ReportWriter live_report(LiveReport* into, const std::string& out_dir, const std::string& junit_path) {
  return [into, out_dir, junit_path](const campaign::ResultsData& so_far, bool final) {
    into->report = build_report(so_far);
    into->files = write_reports(into->report, out_dir, final ? junit_path : "");
  };
}

}  // namespace racelab::reports
