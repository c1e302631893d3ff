// engine/tsan_report.h -- turns ThreadSanitizer's stderr into data_race findings.
//
// A TSan report starts with "WARNING: ThreadSanitizer: data race" and ends
// with a line of '='. From each report we keep the SUMMARY line and the top
// frame ("#0 ...") of each of its stacks (the two conflicting accesses first).
#ifndef RACELAB_ENGINE_TSAN_REPORT_H_
#define RACELAB_ENGINE_TSAN_REPORT_H_

#include <string>
#include <vector>

#include "engine/trial.h"

namespace racelab {

struct TsanRace {
  std::string summary;              // "data race file.cpp:12 in f()"
  std::vector<std::string> frames;  // top frame of each stack, in report order
};

// Feed lines one at a time; completed reports accumulate in races().
class TsanParser {
 public:
  // Returns true if the line belonged to a TSan report (callers may hide it).
  bool feed(const std::string& line);
  const std::vector<TsanRace>& races() const { return races_; }
  void clear() { races_.clear(); in_report_ = false; }

 private:
  bool in_report_ = false;
  bool is_race_ = false;
  bool want_frame_ = false;
  TsanRace current_;
  std::vector<TsanRace> races_;
};

// Puts the parsed reports into r (metrics "tsan_reports") and makes the trial
// data_race unless it already failed worse (a hang, a crash). The in-process
// worker's stderr and an exec trial's program output are parsed the same way.
// A report makes TSan's exit status (66 by default), so data_race also
// outranks the error that status alone would be.
void note_tsan_races(const std::vector<TsanRace>& races, TrialResult* r);

// True when this binary was built with -fsanitize=thread.
bool built_with_tsan();

}  // namespace racelab

#endif  // RACELAB_ENGINE_TSAN_REPORT_H_
