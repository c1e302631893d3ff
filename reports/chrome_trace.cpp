// chrome_trace(): a schedule as Chrome trace-event JSON (see report.h).
#include "reports/report.h"
#include "reports/timeline.h"

namespace racelab::reports {

using nlohmann::json;

json chrome_trace(const json& schedule) {
  const Timeline t = read_timeline(schedule);
  json ev = json::array();
  const int pid = 1;
  ev.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"},
                {"args", {{"name", "racelab " + schedule.value("scenario", std::string("schedule"))}}}});
  for (int th : t.threads)
    ev.push_back({{"ph", "M"}, {"pid", pid}, {"tid", th}, {"name", "thread_name"},
                  {"args", {{"name", "thread " + std::to_string(th)}}}});
  auto slice = [&](const Span& s, const std::string& name, const char* cat) {
    ev.push_back({{"ph", "X"}, {"pid", pid}, {"tid", s.thread}, {"ts", s.begin}, {"dur", s.end - s.begin},
                  {"name", name}, {"cat", cat}});
  };
  for (const auto& s : t.running) slice(s, "run", "schedule");
  for (const auto& s : t.waits) slice(s, "wait " + s.what, "lock");
  for (const auto& s : t.holds) slice(s, "hold " + s.what, "lock");
  for (const auto& p : t.points)
    ev.push_back({{"ph", "i"}, {"s", "t"}, {"pid", pid}, {"tid", p.thread}, {"ts", p.step}, {"name", p.what},
                  {"cat", "point"}});
  for (const auto& p : t.preemptions)
    ev.push_back({{"ph", "i"}, {"s", "t"}, {"pid", pid}, {"tid", p.thread}, {"ts", p.step},
                  {"name", "preempt -> " + p.what}, {"cat", "preemption"}});
  if (t.failing_step >= 0)
    ev.push_back({{"ph", "i"}, {"s", "g"}, {"pid", pid}, {"tid", 0}, {"ts", t.failing_step},
                  {"name", "failure: " + t.outcome}, {"cat", "outcome"}, {"args", {{"detail", t.detail}}}});
  return {{"traceEvents", ev},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"format", "racelab-schedule trace"},
            {"note", "one scheduling step is drawn as one microsecond"},
            {"scenario", schedule.value("scenario", "")},
            {"mitigation", schedule.value("mitigation", "")},
            {"strategy", schedule.value("strategy", "")},
            {"seed", schedule.value("seed", json())}}}};
}

}  // namespace racelab::reports
