// reports/timeline.h -- a schedule file read as per-thread spans, for drawing.
//
// Both the HTML timeline and the Chrome trace draw the same thing, so they
// share this one reading of the schedule's decisions and events:
//  - running: who the scheduler let run, from one decision to the next;
//  - wait:    a thread blocked on a resource, from `block` to its next `acquire`;
//  - hold:    a resource held, from `acquire` to the matching `release`;
//  - point:   an interleaving point reached; a decision with preemption=true
//             (a context switch the strategy forced) is flagged.
#ifndef RACELAB_REPORTS_TIMELINE_H_
#define RACELAB_REPORTS_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab::reports {

struct Span {
  int thread = 0;
  int64_t begin = 0, end = 0;  // steps, end exclusive
  std::string what;
};

struct Mark {
  int thread = 0;
  int64_t step = 0;
  std::string what;
  bool preemption = false;
};

struct Timeline {
  std::vector<int> threads;  // thread ids, ascending
  int64_t steps = 0;         // one past the last step seen
  std::vector<Span> running, waits, holds;
  std::vector<Mark> points, preemptions;
  int64_t failing_step = -1;
  std::string outcome, detail;
};

// Tolerant of missing fields: a schedule without events still yields the
// decisions' running spans.
Timeline read_timeline(const nlohmann::json& schedule);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_TIMELINE_H_
