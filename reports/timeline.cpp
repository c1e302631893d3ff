#include "reports/timeline.h"

#include <algorithm>
#include <map>
#include <set>

namespace racelab::reports {

using nlohmann::json;

Timeline read_timeline(const json& schedule) {
  Timeline t;
  std::set<int> threads;
  const json decisions = schedule.value("decisions", json::array());
  const json events = schedule.value("events", json::array());
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    t.steps = std::max(t.steps, e.value("step", int64_t{0}) + 1);
  }
  for (const auto& d : decisions) {
    if (!d.is_object()) continue;
    t.steps = std::max(t.steps, d.value("step", int64_t{0}) + 1);
  }
  const json outcome = schedule.value("outcome", json::object());
  t.failing_step = outcome.value("failing_step", int64_t{-1});
  t.outcome = outcome.value("class", "");
  t.detail = outcome.value("detail", "");
  if (t.failing_step >= t.steps) t.steps = t.failing_step + 1;

  // Running spans: each decision hands the CPU to one thread until the next.
  for (size_t i = 0; i < decisions.size(); ++i) {
    const auto& d = decisions[i];
    if (!d.is_object()) continue;
    Span s;
    s.thread = d.value("thread", 0);
    s.begin = d.value("step", int64_t{0});
    s.end = i + 1 < decisions.size() ? decisions[i + 1].value("step", s.begin + 1) : t.steps;
    if (s.end <= s.begin) s.end = s.begin + 1;
    s.what = d.value("point", "");
    threads.insert(s.thread);
    t.running.push_back(s);
    if (d.value("preemption", false)) t.preemptions.push_back({s.thread, s.begin, s.what, true});
  }

  std::map<std::pair<int, std::string>, int64_t> blocked, held;
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    const int th = e.value("thread", 0);
    const int64_t step = e.value("step", int64_t{0});
    const std::string kind = e.value("kind", "");
    const std::string what = e.value("what", "");
    threads.insert(th);
    if (kind == "point") {
      t.points.push_back({th, step, what, false});
    } else if (kind == "block") {
      blocked.emplace(std::make_pair(th, what), step);
    } else if (kind == "acquire") {
      auto it = blocked.find({th, what});
      if (it != blocked.end()) {
        t.waits.push_back({th, it->second, std::max(step, it->second + 1), what});
        blocked.erase(it);
      }
      held.emplace(std::make_pair(th, what), step);
    } else if (kind == "release") {
      auto it = held.find({th, what});
      if (it != held.end()) {
        t.holds.push_back({th, it->second, std::max(step, it->second + 1), what});
        held.erase(it);
      }
    }
  }
  // Waits and holds still open when the trial ended run to the end: a thread
  // blocked forever is exactly what a hang looks like.
  for (const auto& [k, b] : blocked) t.waits.push_back({k.first, b, std::max(t.steps, b + 1), k.second});
  for (const auto& [k, b] : held) t.holds.push_back({k.first, b, std::max(t.steps, b + 1), k.second});
  t.threads.assign(threads.begin(), threads.end());
  return t;
}

}  // namespace racelab::reports
