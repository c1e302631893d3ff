// `racelab chrome-trace`: a schedule file as Chrome trace-event JSON, to look
// at in ui.perfetto.dev or chrome://tracing.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/atomic_file.h"
#include "racelab/exit_code.h"
#include "reports/report.h"

namespace racelab::cli {

int chrome_trace_command(int argc, char** argv) {
  CLI::App app{"Write a schedule file as Chrome trace-event JSON (open in ui.perfetto.dev or chrome://tracing)",
               argv[0]};
  std::string schedule, out;
  app.add_option("schedule", schedule, "A racelab schedule file")->required();
  app.add_option("--out,-o", out, "Output file (default: SCHEDULE with .trace.json)");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  if (int rc = require_input_file(app, schedule); rc != kGoOn) return rc;
  std::ifstream in(schedule);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "racelab-schedule") {
    std::fprintf(stderr, "racelab chrome-trace: %s: $.format: expected \"racelab-schedule\"\n", schedule.c_str());
    return kExitBadInput;
  }
  if (out.empty()) out = std::filesystem::path(schedule).replace_extension(".trace.json").string();
  write_file_atomically(out, reports::chrome_trace(doc).dump(1));
  std::printf("%s\n", out.c_str());
  return kExitOk;
}

}  // namespace racelab::cli
