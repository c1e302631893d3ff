#include <filesystem>

#include "racelab/atomic_file.h"
#include "reports/report.h"

namespace racelab::reports {

ReportFiles write_reports(const nlohmann::json& report, const std::string& out_dir, const std::string& junit_path) {
  namespace fs = std::filesystem;
  fs::create_directories(out_dir);
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
