// write_reports(): every format of one report into its directory, atomically.
#include <filesystem>

#include "campaign/relative_path.h"
#include "racelab/atomic_file.h"
#include "reports/report.h"

namespace racelab::reports {

namespace {

namespace fs = std::filesystem;
using campaign::relative_to;

// The report as written: every file it names (scenario files, schedules) is
// relative to the report's own directory instead of the writing machine's.
nlohmann::json with_relative_paths(nlohmann::json report, const std::string& out_dir) {
  const fs::path dir = fs::absolute(out_dir).lexically_normal();
  auto fix = [&](nlohmann::json& field) {
    if (field.is_string()) field = relative_to(field.get<std::string>(), dir);
  };
  for (auto& s : report["scenarios"]) {
    // A scenario file outside the report's folder (the catalogue) is named by
    // its file name: the document itself travels in the results header.
    if (s.contains("file") && s["file"].is_string()) {
      const std::string rel = relative_to(s["file"].get<std::string>(), dir);
      s["file"] = rel.rfind("..", 0) == 0 ? fs::path(rel).filename().string() : rel;
    }
    for (auto& c : s["cells"])
      if (c.contains("first_failure_schedule")) fix(c["first_failure_schedule"]);
    auto& tl = s["timeline"];
    if (tl.is_object()) {
      if (tl.contains("schedule_file")) fix(tl["schedule_file"]);
      if (tl.contains("original_schedule_file")) fix(tl["original_schedule_file"]);
    }
  }
  return report;
}

}  // namespace

ReportFiles write_reports(const nlohmann::json& in_memory, const std::string& out_dir, const std::string& junit_path) {
  fs::create_directories(out_dir);
  const nlohmann::json report = with_relative_paths(in_memory, out_dir);
  ReportFiles files;
  // Traces first: the HTML names them, so they should exist when it does.
  for (const auto& s : report["scenarios"]) {
    const auto& tl = s["timeline"];
    if (tl.is_null() || tl["schedule"].is_null()) continue;
    fs::create_directories(fs::path(out_dir) / "traces");
    write_file_atomically((fs::path(out_dir) / "traces" / (s["name"].get<std::string>() + ".trace.json")).string(),
                          chrome_trace(tl["schedule"]).dump(1));
  }
  files.json = (fs::path(out_dir) / "report.json").string();
  write_file_atomically(files.json, report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  files.markdown = (fs::path(out_dir) / "report.md").string();
  write_file_atomically(files.markdown, render_markdown(report));
  files.html = (fs::path(out_dir) / "report.html").string();
  write_file_atomically(files.html, render_html(report));
  if (!junit_path.empty()) {
    const auto parent = fs::path(junit_path).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    write_file_atomically(junit_path, render_junit(report));
    files.junit = junit_path;
  }
  return files;
}

}  // namespace racelab::reports
