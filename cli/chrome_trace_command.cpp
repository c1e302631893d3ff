// `racelab chrome-trace`: a schedule file as Chrome trace-event JSON, to look
// at in ui.perfetto.dev or chrome://tracing.
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/flags.h"
#include "engine/schedule.h"
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
  if (out.empty()) out = std::filesystem::path(schedule).replace_extension(".trace.json").string();
  if (int rc = require_output(app.get_name(), "--out", out, Output::kFile); rc != kGoOn) return rc;
  // Read as replay reads it (engine/schedule.h): a schedule it would refuse is
  // refused here too, with the same field named, and the trace is drawn from
  // what was read, so every field has the type the drawing expects. Whether
  // its workload exists here does not matter: a trace replays nothing.
  Schedule s;
  try {
    s = load_schedule(schedule);
  } catch (const ScheduleError& e) {
    std::fprintf(stderr, "racelab chrome-trace: %s\n", e.what());
    return kExitBadInput;
  }
  write_file_atomically(out, reports::chrome_trace(s.to_json()).dump(1, ' ', false,
                                                                      nlohmann::json::error_handler_t::replace));
  std::printf("%s\n", out.c_str());
  return kExitOk;
}

}  // namespace racelab::cli
