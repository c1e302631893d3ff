// reports/report.h -- results in, reports out.
//
// build_report() turns raw results (one campaign, a partial one, or merged
// shards) into the canonical JSON report (format "racelab-report", documented in
// reports/REPORT_FORMAT.md). Every other format is rendered from that JSON, so
// the formats cannot disagree:
//
//   results.jsonl --build_report--> report.json --render_*--> report.md, report.html,
//                                                            junit.xml, *.trace.json
#ifndef RACELAB_REPORTS_REPORT_H_
#define RACELAB_REPORTS_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/results_log.h"

namespace racelab::reports {

inline constexpr const char* kReportFormat = "racelab-report";
inline constexpr int kReportVersion = 1;

// Throws std::runtime_error when merged results disagree (different budget
// scales or modes), naming the files' shards.
nlohmann::json build_report(const campaign::ResultsData& data);

// The report of results files (campaign/results_log.h): local shards, or a
// CI matrix's shards (`racelab merge`). Each shard counts once: a file given
// twice, or two files of the same shard of one campaign, is a problem, and so
// is a file that cannot be read. Problems go to *errors; null when no file
// has a header.
nlohmann::json rebuild_report(const std::vector<std::string>& results_files, std::vector<std::string>* errors);
// The same files read into *data, for a caller that builds the report more
// than once (again after minimising the timelines); false when none had a
// header.
bool read_results_files(const std::vector<std::string>& results_files, campaign::ResultsData* data,
                        std::vector<std::string>* errors);

// Expectation totals of a report: {"total", "passed", "failed", "incomplete"}.
bool all_expectations_pass(const nlohmann::json& report);

std::string render_markdown(const nlohmann::json& report);
// A mitigation's cost as the renderers show it: "123.40 ± 5.60 (n 6)" and
// "0.86 ± 0.05" (the ratio to the ideal with its noise, bare when unknown).
std::string cost_value_text(const nlohmann::json& cost);
std::string cost_relative_text(const nlohmann::json& cost);
std::string render_html(const nlohmann::json& report);  // self-contained, inline SVG
std::string render_junit(const nlohmann::json& report);  // one <testcase> per expectation

// Chrome trace-event JSON (opens in Perfetto / chrome://tracing) of a schedule
// file's events: one track per thread, lock waits and holds as slices, points
// and preemptions as instants, the failing step as a global marker. One step is
// drawn as one microsecond.
nlohmann::json chrome_trace(const nlohmann::json& schedule);

struct ReportFiles {
  std::string json, markdown, html, junit;  // empty: not written
};
// Writes report.json, report.md, report.html (and `junit_path` if non-empty)
// into out_dir atomically, plus traces/<scenario>.trace.json for each timeline.
// The written reports name files (scenario files, schedules) relative to
// out_dir, never by the writing machine's absolute paths; `report` itself, the
// in-memory model, keeps the paths it was built with.
ReportFiles write_reports(const nlohmann::json& report, const std::string& out_dir,
                          const std::string& junit_path = "");

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_REPORT_H_
