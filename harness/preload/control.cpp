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

#include "preload/symbols.h"
#include "preload/thread_os.h"
#include "preload/unseen.h"

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

// A lock's name: its symbol (static and global objects, from the program's
// symbol tables; preload/symbols.h), else its address.
std::string name_of(const void* object) { return object_name(object); }

// "thread 2", or "thread 2, which has exited" when it ended holding the lock.
std::string holder_text(int thread) {
  return thread_has_ended(thread) ? fmt::format("thread {}, which has exited", thread) : fmt::format("thread {}", thread);
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

int owner_of(const void* lock) {
  Inside in;
  Waits& w = waits();
  std::lock_guard<std::mutex> lk(w.mu);
  auto it = w.owner.find(lock);
  return it == w.owner.end() ? -1 : it->second;
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
  std::set<int> told;
  // A thread that waits for a lock it holds itself: no other thread is involved.
  for (const auto& [t, what] : w.waiting) {
    if (holder(t) != t) continue;
    out += fmt::format("{}thread {} locks {} {}, which it already holds", out.empty() ? "" : "; ", t,
                       what.second, name_of(what.first));
    told.insert(t);
  }
  // A cycle: follow "waits for a lock held by" from each waiting thread.
  for (const auto& [start, what] : w.waiting) {
    if (told.count(start)) continue;
    std::vector<int> path{start};
    int t = holder(start);
    while (t >= 0 && path.size() <= w.waiting.size() &&
           std::find(path.begin(), path.end(), t) == path.end()) {
      path.push_back(t);
      t = holder(t);
    }
    if (t != start || path.size() < 2) continue;
    std::string cycle;
    for (int x : path) {
      const auto& [obj, kind] = w.waiting[x];
      cycle += fmt::format("{}thread {} waits for {} {} held by thread {}", cycle.empty() ? "" : "; ", x, kind,
                           name_of(obj), holder(x));
      told.insert(x);
    }
    out += (out.empty() ? "" : "; ") + std::string("lock-order cycle: ") + cycle;
    break;
  }
  for (const auto& [t, what] : w.waiting) {
    if (told.count(t)) continue;
    const auto& [obj, kind] = what;
    int h = holder(t);
    std::string line = h >= 0 ? fmt::format("thread {} waits for {} {} held by {}", t, kind, name_of(obj), holder_text(h))
                              : fmt::format("thread {} waits on {} {}", t, kind, name_of(obj));
    out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

namespace {

// A detail (a divergence names the point it expected, which a schedule may
// make as long as it likes) is cut to kReportDetailMax bytes, and says so: a
// report over the page's size would be lost, and the trial then judged by
// its exit status alone.
constexpr size_t kReportDetailMax = 64 << 10;

std::string bounded(const std::string& text) {
  if (text.size() <= kReportDetailMax) return text;
  return text.substr(0, kReportDetailMax) +
         fmt::format(" ... [racelab: {} more bytes cut here]", text.size() - kReportDetailMax);
}

// The program's words may be any bytes: invalid UTF-8 is replaced, never a throw.
std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

bool write_report(bool aborted, const std::string& outcome, const std::string& detail, int64_t failing_step) {
  static std::atomic<bool> written{false};
  if (written.exchange(true)) return false;
  if (g_report == nullptr) return true;
  Inside in;
  nlohmann::json j = {{"aborted", aborted}, {"outcome", outcome}, {"detail", bounded(detail)},
                      {"failing_step", failing_step}};
  if (nlohmann::json unseen = unseen_calls(); !unseen.empty()) j["unseen_sync"] = std::move(unseen);
  if (g_sched != nullptr) {
    j["steps"] = g_sched->steps();
    j["preemptions"] = g_sched->preemptions();
    j["threads"] = g_sched->threads_seen();
    nlohmann::json es = nlohmann::json::array();
    for (Event& e : g_sched->copy_events()) {
      e.what = bounded(e.what);
      es.push_back(event_to_json(e));
    }
    j["events"] = std::move(es);
  }
  std::string text = dump(j);
  if (text.size() > kExecReportMax) {
    j["events"] = nlohmann::json::array();
    j["events_truncated"] = true;
    text = dump(j);
  }
  // Still too long (thousands of unseen call names?): the verdict and a detail that says so.
  if (text.size() > kExecReportMax) {
    j = {{"aborted", aborted}, {"outcome", outcome}, {"detail", bounded(detail).substr(0, 4096) + " [racelab: report cut]"},
         {"failing_step", failing_step}, {"events_truncated", true}};
    text = dump(j);
  }
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
