// host/host.cpp -- the engine's plain C ABI (racelab/host.h) for foreign hosts.
//
// A thin layer: the trial a host runs is set up exactly as run_trial sets up
// its own (engine/run_trial.cpp): the same strategies, the same Scheduler, the
// same decision mirroring into the supervisor's shared trace, the same
// classification (collect_result). What differs is who runs the body: the
// host's own threads, which call in here. The watchdog, which run_trial runs
// on its calling thread, is a thread of its own here.
#include "racelab/host.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/exec_protocol.h"
#include "engine/free_controller.h"
#include "engine/outcome.h"
#include "engine/python_host.h"
#include "engine/run_trial.h"
#include "engine/scheduler.h"
#include "engine/strategy.h"
#include "engine/trial.h"
#include "engine/worker.h"
#include "engine/worker_channel.h"
#include "racelab/controller.h"

#define RACELAB_HOST_API extern "C" __attribute__((visibility("default")))

namespace {

using racelab::Controller;
using racelab::TrialAborted;
using Clock = std::chrono::steady_clock;

thread_local std::string tl_error;

int fail(const std::string& why) {
  tl_error = why;
  return RACELAB_HOST_ERROR;
}

// Point and resource names outlive the trial: the scheduler stores them by
// pointer, and schedules name them.
const char* intern(const char* name) {
  static std::mutex mu;
  static std::unordered_set<std::string> names;
  std::lock_guard<std::mutex> lk(mu);
  return names.emplace(name != nullptr ? name : "").first->c_str();
}

racelab::SharedTrace* g_trace = nullptr;

// The one trial in flight.
struct HostTrial {
  racelab::TrialSpec spec;
  std::unique_ptr<racelab::Strategy> strategy;
  std::unique_ptr<racelab::Scheduler> sched;
  std::unique_ptr<racelab::FreeController> free_ctl;
  Controller* ctl = nullptr;
  Clock::time_point t0;
  std::thread watchdog;
  std::mutex mu;
  std::condition_variable cv;
  bool ending = false;
  std::atomic<bool> watchdog_fired{false};
  std::string watchdog_why;
  // end_leftover() aborted the scheduler to unwind threads nobody waits for:
  // the observation, not the abort, classifies the trial.
  std::atomic<bool> leftover_ended{false};
  // Let-go by CPU time (the knob let_go_cpu_ms; 0: never): each managed
  // thread's CPU clock, registered by the thread itself as it starts.
  double let_go_cpu_s = 0;
  std::mutex clocks_mu;
  std::unordered_map<int, clockid_t> clocks;

  void register_clock(int id) {
    clockid_t c;
    if (pthread_getcpuclockid(pthread_self(), &c) != 0) return;
    std::lock_guard<std::mutex> lk(clocks_mu);
    clocks[id] = c;
  }

  // Thread `id`'s CPU seconds; -1 when unknown (not registered, or ended).
  double cpu_s(int id) {
    clockid_t c;
    {
      std::lock_guard<std::mutex> lk(clocks_mu);
      auto it = clocks.find(id);
      if (it == clocks.end()) return -1;
      c = it->second;
    }
    timespec ts{};
    if (clock_gettime(c, &ts) != 0) return -1;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }

  void forget_clock(int id) {
    std::lock_guard<std::mutex> lk(clocks_mu);
    clocks.erase(id);
  }

  int64_t progress() const {
    if (sched) return sched->progress();
    if (free_ctl) return free_ctl->progress();
    return 0;
  }

  // The running thread used let_go_cpu_s of CPU since the step it runs began
  // (cpu_at_step, taken when the step was first seen) without calling in: it
  // runs code with no point (a loop over a plain flag, a long computation).
  // Let it go, so the others can run. Returns whether it did.
  bool let_go_if_spinning(int running, double cpu_at_step) {
    if (!sched || let_go_cpu_s <= 0 || running < 0 || cpu_at_step < 0) return false;
    const double used = cpu_s(running) - cpu_at_step;
    if (used < let_go_cpu_s) return false;
    return sched->let_go(running, fmt::format("no scheduling point for {:g} ms of its CPU time (code with no point)",
                                              let_go_cpu_s * 1000));
  }

  // No progress for watchdog_s: the running thread waits where the scheduler
  // cannot see (a lock racelab did not replace, I/O). Abort, so every thread
  // blocked in the scheduler unwinds. Without a controller it bounds the trial.
  void watch() {
    std::unique_lock<std::mutex> lk(mu);
    int64_t last = progress();
    auto last_change = Clock::now();
    double poll_s = std::min(0.05, spec.watchdog_s / 4);
    if (let_go_cpu_s > 0) poll_s = std::min(poll_s, std::max(0.001, let_go_cpu_s / 10));
    const auto poll = std::chrono::duration<double>(poll_s);
    int running = sched ? sched->current() : -1;
    double cpu_at_step = running >= 0 ? cpu_s(running) : -1;
    while (!ending) {
      cv.wait_for(lk, poll);
      if (ending) break;
      int64_t now_p = progress();
      if (now_p != last) {
        last = now_p;
        last_change = Clock::now();
        running = sched ? sched->current() : -1;
        cpu_at_step = running >= 0 ? cpu_s(running) : -1;
      } else if (cpu_at_step < 0 && running >= 0) {
        cpu_at_step = cpu_s(running);  // the thread registered its clock after the step began
      } else if (let_go_if_spinning(running, cpu_at_step)) {
        last = progress();
        last_change = Clock::now();
        running = sched->current();
        cpu_at_step = running >= 0 ? cpu_s(running) : -1;
      } else if (std::chrono::duration<double>(Clock::now() - last_change).count() >= spec.watchdog_s) {
        watchdog_why = fmt::format(
            "watchdog: no progress for {:g} s (a thread is blocked where the scheduler cannot see it)",
            spec.watchdog_s);
        watchdog_fired = true;
        if (sched) sched->abort(racelab::Outcome::kHang, watchdog_why);
        break;
      }
    }
  }
};

HostTrial* g_trial = nullptr;

racelab::Observation observation_from_json(const nlohmann::json& j) {
  racelab::Observation obs;
  if (!j.is_object()) throw std::invalid_argument("observation: expected a JSON object");
  for (const auto& e : j.value("errors", nlohmann::json::array())) obs.errors.push_back(e.get<std::string>());
  obs.stuck_state = j.value("stuck_state", "");
  obs.wrong_result = j.value("wrong_result", "");
  obs.silent_fallbacks = j.value("silent_fallbacks", int64_t{0});
  obs.metrics = j.value("metrics", nlohmann::json::object());
  return obs;
}

// Calls that may throw TrialAborted out of the scheduler.
template <class F>
int guarded(F f) {
  try {
    f();
    return RACELAB_HOST_OK;
  } catch (const TrialAborted&) {
    return RACELAB_HOST_ABORTED;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

}  // namespace

RACELAB_HOST_API int racelab_host_abi_version(void) { return RACELAB_HOST_ABI_VERSION; }

RACELAB_HOST_API const char* racelab_host_last_error(void) { return tl_error.c_str(); }

RACELAB_HOST_API int racelab_host_worker_open(void) {
  if (g_trace != nullptr) return RACELAB_HOST_OK;
  g_trace = racelab::open_worker_channel();
  return g_trace != nullptr ? RACELAB_HOST_OK : fail("not started by a racelab supervisor (no fds 3-5)");
}

RACELAB_HOST_API int racelab_host_trial_begin(const char* spec_json) {
  if (g_trial != nullptr) return fail("a trial is already running in this process");
  auto t = std::make_unique<HostTrial>();
  try {
    t->spec = racelab::TrialSpec::from_json(nlohmann::json::parse(spec_json != nullptr ? spec_json : ""));
    const auto& s = t->spec.strategy;
    std::string kind = s.is_object() ? s.value("kind", "") : "";
    if (kind == "free") {
      double jitter = s.value("jitter", 0.0);
      if (jitter > 0) t->free_ctl = std::make_unique<racelab::FreeController>(jitter, t->spec.seed);
      t->ctl = t->free_ctl.get();
    } else {
      t->strategy = racelab::make_strategy(s, t->spec.seed);
      racelab::Scheduler::Options opt;
      opt.max_steps = t->spec.max_steps;
      // A user's script (racelab pyrun) is a program no one here wrote: a
      // thread that loops on work until another tells it to stop would starve
      // that other under PCT's priorities, where natively the OS gives it a
      // core within a time slice, and the trial would end as a hang the
      // script does not have. As in exec, a candidate that has waited
      // kExecFairSteps steps runs next. The catalogue's workloads keep it
      // off, so their verdicts do not move.
      if (t->spec.workload == racelab::kPythonScriptWorkload) opt.fair_steps = racelab::kExecFairSteps;
      opt.record_events = t->spec.record_events;
      if (g_trace != nullptr) opt.on_decision = racelab::mirror_decisions(g_trace);
      t->sched = std::make_unique<racelab::Scheduler>(t->strategy.get(), opt);
      t->ctl = t->sched.get();
    }
  } catch (const std::exception& e) {
    return fail(std::string("trial spec: ") + e.what());
  }
  if (g_trace != nullptr) {
    g_trace->trial.store(t->spec.trial);
    g_trace->count.store(0);
  }
  if (t->spec.knobs.is_object()) t->let_go_cpu_s = t->spec.knobs.value("let_go_cpu_ms", 0.0) / 1000.0;
  t->t0 = Clock::now();
  if (t->ctl != nullptr) racelab::attach(t->ctl);
  HostTrial* raw = t.get();
  t->watchdog = std::thread([raw] { raw->watch(); });
  g_trial = t.release();
  return RACELAB_HOST_OK;
}

RACELAB_HOST_API int racelab_host_enter_main(void) {
  if (g_trial == nullptr) return fail("enter_main: no trial running");
  g_trial->register_clock(0);
  if (g_trial->sched) g_trial->sched->enter_main();
  if (g_trial->free_ctl) g_trial->free_ctl->enter_main();
  return RACELAB_HOST_OK;
}

RACELAB_HOST_API int racelab_host_exit_main(void) {
  if (g_trial == nullptr) return fail("exit_main: no trial running");
  if (g_trial->sched) g_trial->sched->exit_main();
  if (g_trial->free_ctl) g_trial->free_ctl->exit_main();
  return RACELAB_HOST_OK;
}

RACELAB_HOST_API char* racelab_host_trial_end(const char* observation_json) {
  if (g_trial == nullptr) {
    fail("trial_end: no trial running");
    return nullptr;
  }
  HostTrial* t = g_trial;
  racelab::Observation obs;
  std::string bad_observation;
  try {
    obs = observation_from_json(nlohmann::json::parse(observation_json != nullptr ? observation_json : "{}"));
  } catch (const std::exception& e) {
    bad_observation = std::string("host: bad observation: ") + e.what();
  }
  {
    std::lock_guard<std::mutex> lk(t->mu);
    t->ending = true;
  }
  t->cv.notify_all();
  t->watchdog.join();
  // Thread 0 ended last once it joined its children; a straggler the body did
  // not join gets a moment, as in run_trial.
  bool finished = !t->sched || t->sched->wait_finished(1.0);
  if (t->ctl != nullptr) racelab::detach();
  racelab::TrialResult r = racelab::collect_result(t->sched.get(), t->free_ctl.get(), obs, t->watchdog_fired);
  if (t->watchdog_fired) r.detail = t->watchdog_why;
  if (t->leftover_ended && !t->watchdog_fired && t->sched && t->sched->abort_outcome() == racelab::Outcome::kHolds) {
    r.detail.clear();
    r.outcome = racelab::classify_observation(obs, &r.detail);
    r.failing_step = r.outcome == racelab::Outcome::kHolds ? -1 : r.steps;
    racelab::name_fired_timeouts(&r);
  }
  if (!bad_observation.empty() && r.outcome == racelab::Outcome::kHolds) {
    r.outcome = racelab::Outcome::kError;
    r.detail = bad_observation;
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t->t0).count();
  g_trial = nullptr;
  if (!finished) {
    // A managed thread never came back from where the watchdog found it: it
    // still points at the scheduler, so leak it, and replace the process.
    r.process_tainted = true;
    (void)t->sched.release();
    (void)t->strategy.release();
    (void)t->free_ctl.release();
  }
  delete t;
  std::string out = r.to_json().dump();
  char* p = static_cast<char*>(std::malloc(out.size() + 1));
  if (p != nullptr) std::memcpy(p, out.c_str(), out.size() + 1);
  return p;
}

RACELAB_HOST_API void racelab_host_free(char* p) { std::free(p); }

RACELAB_HOST_API int racelab_host_managed(void) { return racelab::controller_for_this_thread() != nullptr; }

RACELAB_HOST_API int racelab_host_point(const char* name) {
  Controller* c = racelab::controller_for_this_thread();
  if (c == nullptr) return RACELAB_HOST_OK;
  const char* n = intern(name);
  return guarded([&] { c->on_point(n); });
}

RACELAB_HOST_API int racelab_host_thread_create(void) {
  Controller* c = racelab::controller_for_this_thread();
  return c != nullptr ? c->on_thread_create() : -1;
}

RACELAB_HOST_API int racelab_host_thread_start(int id) {
  // The child is not managed yet: ask the trial's controller itself.
  if (g_trial == nullptr || g_trial->ctl == nullptr || id < 0) return RACELAB_HOST_OK;
  Controller* c = g_trial->ctl;
  g_trial->register_clock(id);
  return guarded([&] { c->on_thread_start(id); });
}

RACELAB_HOST_API void racelab_host_thread_end(int id) {
  if (g_trial == nullptr || g_trial->ctl == nullptr || id < 0) return;
  g_trial->forget_clock(id);
  g_trial->ctl->on_thread_end(id);
}

RACELAB_HOST_API int racelab_host_yield(const char* name) {
  Controller* c = racelab::controller_for_this_thread();
  if (c == nullptr || g_trial == nullptr || !g_trial->sched || c != g_trial->ctl) {
    if (c != nullptr) {
      const char* n = intern(name);
      if (int rc = guarded([&] { c->on_point(n); }); rc != RACELAB_HOST_OK) return rc;
    }
    return RACELAB_HOST_FREE;
  }
  const char* n = intern(name);
  racelab::Scheduler* s = g_trial->sched.get();
  return guarded([&] { s->on_yield(n); });
}

RACELAB_HOST_API int racelab_host_end_leftover(const char* why) {
  if (g_trial == nullptr) return fail("end_leftover: no trial running");
  if (!g_trial->sched) return RACELAB_HOST_OK;  // free running: nothing waits in a scheduler
  g_trial->leftover_ended = true;
  g_trial->sched->abort(racelab::Outcome::kHolds, why != nullptr ? why : "threads left when the body ended");
  return RACELAB_HOST_OK;
}

RACELAB_HOST_API int racelab_host_join(int id) {
  Controller* c = racelab::controller_for_this_thread();
  if (c == nullptr || id < 0) return RACELAB_HOST_OK;
  return guarded([&] { c->on_join(id); });
}

RACELAB_HOST_API int racelab_host_block(uintptr_t resource, const char* what) {
  Controller* c = racelab::controller_for_this_thread();
  if (c == nullptr) return RACELAB_HOST_OK;
  const char* n = intern(what);
  return guarded([&] { c->on_block(reinterpret_cast<const void*>(resource), n); });
}

namespace {
// The trial's scheduler when it controls the calling thread; nullptr when the
// caller must wait for real (see RACELAB_HOST_FREE).
racelab::Scheduler* scheduler_of_caller() {
  Controller* c = racelab::controller_for_this_thread();
  if (c == nullptr || g_trial == nullptr || !g_trial->sched || c != g_trial->ctl) return nullptr;
  return g_trial->sched.get();
}

// A timed wait's outcome as the ABI's code.
template <class Wait>
int timed(Wait wait) {
  bool woken = false;
  int rc = guarded([&] { woken = wait(); });
  if (rc != RACELAB_HOST_OK) return rc;
  return woken ? RACELAB_HOST_OK : RACELAB_HOST_TIMEDOUT;
}

int64_t deadline_after(racelab::Scheduler* s, int64_t timeout_ns) {
  const int64_t now = s->now_ns();
  return timeout_ns > INT64_MAX - now ? INT64_MAX : now + std::max<int64_t>(timeout_ns, 0);
}
}  // namespace

RACELAB_HOST_API int64_t racelab_host_now_ns(void) {
  racelab::Scheduler* s = scheduler_of_caller();
  return s != nullptr ? s->now_ns() : -1;
}

RACELAB_HOST_API int racelab_host_sleep(const char* name, int64_t ns) {
  racelab::Scheduler* s = scheduler_of_caller();
  if (s == nullptr) return RACELAB_HOST_FREE;
  const char* n = intern(name);
  return guarded([&] { s->on_sleep(n, ns); });
}

RACELAB_HOST_API int racelab_host_block_for(uintptr_t resource, const char* what, int64_t timeout_ns) {
  racelab::Scheduler* s = scheduler_of_caller();
  if (s == nullptr) return RACELAB_HOST_FREE;
  const char* n = intern(what);
  return timed([&] { return s->on_block_until(reinterpret_cast<const void*>(resource), n, deadline_after(s, timeout_ns)); });
}

RACELAB_HOST_API int racelab_host_join_for(int id, const char* what, int64_t timeout_ns) {
  racelab::Scheduler* s = scheduler_of_caller();
  if (s == nullptr || id < 0) return RACELAB_HOST_FREE;
  const char* n = intern(what);
  return timed([&] { return s->on_join_until(id, n, deadline_after(s, timeout_ns)); });
}

RACELAB_HOST_API int racelab_host_step_out(const char* why) {
  racelab::Scheduler* s = scheduler_of_caller();
  if (s == nullptr) return RACELAB_HOST_FREE;
  const char* n = intern(why);
  return guarded([&] { s->step_out(n); });
}

RACELAB_HOST_API void racelab_host_release(uintptr_t resource) {
  if (Controller* c = racelab::controller_for_this_thread()) c->on_release(reinterpret_cast<const void*>(resource));
}

RACELAB_HOST_API void racelab_host_acquire(uintptr_t resource, const char* what) {
  if (Controller* c = racelab::controller_for_this_thread())
    c->on_acquire(reinterpret_cast<const void*>(resource), intern(what));
}

RACELAB_HOST_API void racelab_host_forget_after_fork(void) {
  // The scheduler's threads are not in this process: detach without touching it.
  racelab::detach();
  g_trial = nullptr;
}
