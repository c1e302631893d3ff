#include "preload/control.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace racelab::preload {

thread_local ThreadState tl __attribute__((tls_model("initial-exec")));
Scheduler* g_sched = nullptr;
std::atomic<bool> g_active{false};
ExecReport* g_report = nullptr;

namespace {

struct Waits {
  std::mutex mu;  // taken only inside the shim (Inside): the C library's
  std::map<const void*, int> owner;
  std::map<int, std::pair<const void*, const char*>> waiting;
};
Waits& waits() {
  static Waits* w = new Waits;  // never destroyed: exit() runs while threads are parked
  return *w;
}

// A lock's name: its symbol when the program exports one, else its address.
std::string name_of(const void* object) {
  Dl_info info{};
  if (::dladdr(object, &info) != 0 && info.dli_sname != nullptr && info.dli_saddr == object)
    return info.dli_sname;
  return fmt::format("{}", object);
}

}  // namespace

void note_owner(const void* lock, int thread) {
  Inside in;
  Waits& w = waits();
  std::lock_guard<std::mutex> lk(w.mu);
  if (thread < 0)
    w.owner.erase(lock);
  else
    w.owner[lock] = thread;
}

void note_waiting(int thread, const void* object, const char* kind) {
  Inside in;
  Waits& w = waits();
  std::lock_guard<std::mutex> lk(w.mu);
  if (object == nullptr)
    w.waiting.erase(thread);
  else
    w.waiting[thread] = {object, kind};
}

std::string describe_waits() {
  Inside in;
  Waits& w = waits();
  std::lock_guard<std::mutex> lk(w.mu);
  auto holder = [&](int t) -> int {
    auto it = w.waiting.find(t);
    if (it == w.waiting.end()) return -1;
    auto o = w.owner.find(it->second.first);
    return o == w.owner.end() ? -1 : o->second;
  };
  std::string out;
  // A cycle: follow "waits for a lock held by" from each waiting thread.
  std::set<int> in_cycle;
  for (const auto& [start, what] : w.waiting) {
    std::vector<int> path{start};
    int t = holder(start);
    while (t >= 0 && path.size() <= w.waiting.size() &&
           std::find(path.begin(), path.end(), t) == path.end()) {
      path.push_back(t);
      t = holder(t);
    }
    if (t != start) continue;
    std::string cycle;
    for (int x : path) {
      const auto& [obj, kind] = w.waiting[x];
      cycle += fmt::format("{}thread {} waits for {} {} held by thread {}", cycle.empty() ? "" : "; ", x, kind,
                           name_of(obj), holder(x));
      in_cycle.insert(x);
    }
    out = "lock-order cycle: " + cycle;
    break;
  }
  for (const auto& [t, what] : w.waiting) {
    if (in_cycle.count(t)) continue;
    const auto& [obj, kind] = what;
    int h = holder(t);
    std::string line = h >= 0 ? fmt::format("thread {} waits for {} {} held by thread {}", t, kind, name_of(obj), h)
                              : fmt::format("thread {} waits on {} {}", t, kind, name_of(obj));
    out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

bool write_report(bool aborted, const std::string& outcome, const std::string& detail, int64_t failing_step) {
  static std::atomic<bool> written{false};
  if (written.exchange(true)) return false;
  if (g_report == nullptr) return true;
  Inside in;
  nlohmann::json j = {{"aborted", aborted}, {"outcome", outcome}, {"detail", detail},
                      {"failing_step", failing_step}};
  if (g_sched != nullptr) {
    j["steps"] = g_sched->steps();
    j["preemptions"] = g_sched->preemptions();
    j["threads"] = g_sched->threads_seen();
    nlohmann::json es = nlohmann::json::array();
    for (const Event& e : g_sched->copy_events()) es.push_back(event_to_json(e));
    j["events"] = std::move(es);
  }
  std::string text = j.dump();
  if (text.size() > kExecReportMax) {
    j["events"] = nlohmann::json::array();
    j["events_truncated"] = true;
    text = j.dump();
  }
  if (text.size() > kExecReportMax) text.resize(0);
  std::memcpy(g_report->json, text.data(), text.size());
  g_report->size.store(static_cast<uint32_t>(text.size()), std::memory_order_release);
  return true;
}

void end_aborted() {
  Inside in;
  std::string detail = g_sched->abort_detail();
  if (g_sched->abort_outcome() == Outcome::kHang && detail.rfind("deadlock", 0) == 0) {
    std::string waits = describe_waits();
    if (!waits.empty()) detail += " -- " + waits;
  }
  if (write_report(true, outcome_name(g_sched->abort_outcome()), detail, g_sched->abort_step())) ::_exit(0);
  // Another thread is ending the trial; wait for it to.
  for (;;) ::pause();
}

}  // namespace racelab::preload
