// The one-line form (`racelab1:...`, engine/schedule.h) pasted from a log:
// from_compact refuses bad input only with ScheduleError, and what it accepts
// encodes back to an equivalent schedule.
#include <cstdlib>

#include "engine/schedule.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  racelab::Schedule s;
  try {
    s = racelab::from_compact(racelab::fuzz::text(data, size));
  } catch (const racelab::ScheduleError&) {
    return 0;
  }
  const racelab::Schedule again = racelab::from_compact(racelab::to_compact(s));
  if (again.decisions.size() != s.decisions.size() || again.workload != s.workload || again.knobs != s.knobs)
    std::abort();
  return 0;
}
