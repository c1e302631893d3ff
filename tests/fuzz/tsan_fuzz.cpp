// ThreadSanitizer's report parser (engine/tsan_report.h) fed with a program's
// output, as an exec trial feeds it (engine/exec_worker.cpp): any bytes, any
// lines, a report cut short or a program that prints TSan's words itself.
// It never throws; it finds at most one race per "WARNING: ThreadSanitizer:"
// line, and a trial it marks data_race goes to the supervisor as one JSON line
// (invalid UTF-8 replaced, as the worker writes it) that reads back alike.
#include <cstdlib>
#include <sstream>
#include <string>

#include "engine/trial.h"
#include "engine/tsan_report.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(racelab::fuzz::text(data, size));
  racelab::TsanParser tsan;
  size_t warnings = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("WARNING: ThreadSanitizer:") != std::string::npos) ++warnings;
    tsan.feed(line);
  }
  if (tsan.races().size() > warnings) std::abort();
  racelab::TrialResult r;
  r.outcome = racelab::Outcome::kHolds;
  racelab::note_tsan_races(tsan.races(), &r);
  if (!tsan.races().empty() && r.outcome != racelab::Outcome::kDataRace) std::abort();
  const std::string wire = r.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const racelab::TrialResult back = racelab::TrialResult::from_json(nlohmann::json::parse(wire));
  if (back.outcome != r.outcome || back.metrics.value("tsan_reports", nlohmann::json::array()).size() !=
                                       tsan.races().size())
    std::abort();
  return 0;
}
