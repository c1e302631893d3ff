// Schedule files (engine/schedule.h): Schedule::from_json refuses bad input
// only with ScheduleError; what it accepts must survive a round trip through
// the file and the compact form.
#include <cstdlib>

#include "engine/schedule.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = racelab::fuzz::json_of(data, size);
  if (doc.is_discarded()) return 0;
  racelab::Schedule s;
  try {
    s = racelab::Schedule::from_json(doc, "fuzz.json");
  } catch (const racelab::ScheduleError&) {
    return 0;
  }
  const racelab::Schedule again = racelab::Schedule::from_json(s.to_json(), "round trip");
  if (again.decisions.size() != s.decisions.size() || again.threads != s.threads) std::abort();
  const racelab::Schedule compact = racelab::from_compact(racelab::to_compact(s));
  if (compact.decisions.size() != s.decisions.size() || compact.seed != s.seed) std::abort();
  (void)s.replay_spec();
  return 0;
}
