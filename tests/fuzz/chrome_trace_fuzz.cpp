// `racelab chrome-trace`'s reader: the text of a schedule file, read as
// replay reads it (engine/schedule.h: parse_schedule, duplicate keys
// included), then drawn (reports/timeline.h, reports::chrome_trace). Bad text
// may be refused only with ScheduleError (exit 3); what is read must draw,
// and the trace must serialise, without any other exception.
#include <cstdlib>

#include "engine/schedule.h"
#include "fuzz_input.h"
#include "reports/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  racelab::Schedule s;
  try {
    s = racelab::parse_schedule(racelab::fuzz::text(data, size), "fuzz.json");
  } catch (const racelab::ScheduleError&) {
    return 0;
  }
  const nlohmann::json trace = racelab::reports::chrome_trace(s.to_json());
  if (!trace.contains("traceEvents") || !trace["traceEvents"].is_array()) std::abort();
  (void)trace.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
