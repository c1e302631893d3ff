#include "engine/run_trial.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/exec_host.h"
#include "engine/free_controller.h"
#include "engine/python_host.h"
#include "engine/scheduler.h"
#include "engine/strategy.h"
#include "racelab/controller.h"

namespace racelab {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const Workload& require_workload(const std::string& name) {
  if (const Workload* w = find_workload(name)) return *w;
  std::string names;
  for (const Workload* w : all_workloads()) names += (names.empty() ? "" : ", ") + w->name;
  throw std::invalid_argument(fmt::format("unknown workload '{}' (registered: {})", name,
                                          names.empty() ? std::string("none") : names));
}

json merge_knobs(const Workload& workload, const json& knobs) {
  json merged = workload.default_knobs.is_object() ? workload.default_knobs : json::object();
  if (knobs.is_null()) return merged;
  if (!knobs.is_object()) throw KnobError("", knobs.dump(), "an object of knobs");
  for (auto it = knobs.begin(); it != knobs.end(); ++it) {
    if (!merged.contains(it.key())) {
      std::string accepted;
      for (auto d = merged.begin(); d != merged.end(); ++d) accepted += (accepted.empty() ? "" : ", ") + d.key();
      throw KnobError(it.key(), "an unknown knob",
                      fmt::format("a knob of workload '{}' ({})", workload.name, accepted.empty() ? "none" : accepted));
    }
    const json& def = merged[it.key()];
    bool same_kind = (def.is_number() && it.value().is_number()) || def.type() == it.value().type() ||
                     def.is_null();
    if (!same_kind) throw KnobError(it.key(), it.value().dump(), "a value like " + def.dump());
    merged[it.key()] = it.value();
  }
  if (workload.check_knobs) workload.check_knobs(merged);
  return merged;
}

std::string resolve_mitigation(const Workload& workload, const std::string& mitigation) {
  if (mitigation.empty()) return workload.mitigations.empty() ? "none" : workload.mitigations.front();
  // An exec trial's mitigation is the user's name for a variant of the program
  // (a scenario's "exec" section); the variant itself is in the knobs.
  // So is a script's (racelab pyrun), which reads it from $RACELAB_MITIGATION.
  if (workload.name == kExecWorkload || workload.name == kPythonScriptWorkload) return mitigation;
  if (workload.mitigations.empty() && mitigation == "none") return mitigation;
  for (const auto& m : workload.mitigations)
    if (m == mitigation) return mitigation;
  std::string accepted;
  for (const auto& m : workload.mitigations) accepted += (accepted.empty() ? "" : ", ") + m;
  throw std::invalid_argument(fmt::format("mitigation '{}': unknown for workload '{}' (accepted: {})", mitigation,
                                          workload.name, accepted.empty() ? "none" : accepted));
}

namespace {

// What thread 0 reports back to the watchdog.
struct BodyState {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Observation obs;
};

void run_body(const Workload& w, const TrialInput& input, BodyState* st) {
  Observation obs;
  try {
    obs = w.run(input);
  } catch (const TrialAborted&) {
    // The engine ended the trial; its outcome says why.
  } catch (const std::exception& e) {
    obs.errors.push_back(e.what());
  } catch (...) {
    obs.errors.push_back("unknown exception");
  }
  std::lock_guard<std::mutex> lk(st->mu);
  st->obs = std::move(obs);
  st->done = true;
  st->cv.notify_all();
}

}  // namespace

void name_fired_timeouts(TrialResult* r) {
  if (r->outcome == Outcome::kHolds || !r->metrics.contains("timeouts_fired")) return;
  const json& fired = r->metrics["timeouts_fired"];
  if (!fired.is_array() || fired.empty() || r->detail.find("[timeout expired") != std::string::npos) return;
  std::string list;
  constexpr size_t kNamed = 3;
  for (size_t i = 0; i < fired.size() && i < kNamed; ++i) {
    const json& f = fired[i];
    list += fmt::format("{}{} in thread {} after {:g} s of logical time{}", i == 0 ? "" : "; ",
                        f.value("wait", std::string("a timed wait")), f.value("thread", -1), f.value("seconds", 0.0),
                        f.value("nothing_else_could_run", false) ? ", when no other thread could run" : "");
  }
  if (fired.size() > kNamed) list += fmt::format("; and {} more", fired.size() - kNamed);
  r->detail += fmt::format("{}[timeout expired before this failure, as the program's safety net: {}]",
                           r->detail.empty() ? "" : " ", list);
}

TrialResult collect_result(Scheduler* sched, FreeController* free_ctl, const Observation& obs, bool watchdog_fired) {
  TrialResult r;
  r.metrics = obs.metrics.is_object() ? obs.metrics : json::object();
  // Counted even when another class wins, so cost reports can show the eager share.
  if (obs.silent_fallbacks > 0) r.metrics["silent_fallbacks"] = obs.silent_fallbacks;
  if (sched) {
    r.decisions = sched->take_decisions();
    r.events = sched->take_events();
    r.steps = sched->steps();
    r.preemptions = sched->preemptions();
    r.managed_threads = sched->threads_seen();
    r.uncontrolled = sched->uncontrolled();
    if (sched->events_truncated()) r.metrics["events_truncated"] = true;
    const auto fired = sched->fired_timeouts();
    if (!fired.empty()) {
      json list = json::array();
      for (const auto& f : fired)
        list.push_back({{"thread", f.thread},
                        {"wait", f.what},
                        {"seconds", static_cast<double>(f.waited_ns) / 1e9},
                        {"nothing_else_could_run", f.nothing_else_ran},
                        {"step", f.step}});
      r.metrics["timeouts_fired"] = std::move(list);
    }
  } else if (free_ctl) {
    r.steps = free_ctl->progress();
    r.managed_threads = free_ctl->threads_seen();
  }
  if (watchdog_fired) {
    r.outcome = Outcome::kHang;
    r.failing_step = r.steps;
    return r;
  }
  if (sched && sched->aborted()) {
    r.outcome = sched->abort_outcome();
    r.detail = sched->abort_detail();
    r.failing_step = sched->abort_step();
  } else {
    r.outcome = classify_observation(obs, &r.detail);
    if (r.outcome != Outcome::kHolds) r.failing_step = r.steps;
  }
  name_fired_timeouts(&r);
  if (r.uncontrolled > 0) {
    r.metrics["uncontrolled_calls"] = r.uncontrolled;
    r.detail += fmt::format("{}[uncontrolled nondeterminism: {} instrumented call(s) from unmanaged threads]",
                            r.detail.empty() ? "" : " ", r.uncontrolled);
  }
  return r;
}

TrialResult run_trial(const TrialSpec& spec, const TrialHooks& hooks) {
  const Workload& w = require_workload(spec.workload);
  TrialInput input;
  input.knobs = merge_knobs(w, spec.knobs);
  input.mitigation = resolve_mitigation(w, spec.mitigation);
  input.threads = spec.threads;
  input.seed = spec.seed;

  std::string kind = spec.strategy.is_object() ? spec.strategy.value("kind", "") : "";
  bool free_running = kind == "free";
  double jitter = free_running ? spec.strategy.value("jitter", 0.0) : 0.0;
  std::unique_ptr<Strategy> strategy;
  if (!free_running) strategy = make_strategy(spec.strategy, spec.seed);

  if (w.reset) w.reset();
  if (w.prepare) w.prepare(input);  // before t0: outside the trial's time (racelab/workload.h)

  // Heap objects: after an unrecoverable watchdog hang they are leaked on
  // purpose, because abandoned threads still point at them.
  std::unique_ptr<Scheduler> sched;
  std::unique_ptr<FreeController> free_ctl;
  Controller* ctl = nullptr;
  if (!free_running) {
    Scheduler::Options opt;
    opt.max_steps = spec.max_steps;
    opt.record_events = spec.record_events;
    opt.on_decision = hooks.on_decision;
    sched = std::make_unique<Scheduler>(strategy.get(), opt);
    ctl = sched.get();
  } else if (jitter > 0) {
    free_ctl = std::make_unique<FreeController>(jitter, spec.seed);
    ctl = free_ctl.get();
  }
  auto progress = [&]() -> int64_t {
    if (sched) return sched->progress();
    if (free_ctl) return free_ctl->progress();
    return 0;
  };

  auto body_state = std::make_shared<BodyState>();
  TrialResult r;
  auto t0 = Clock::now();
  if (ctl) attach(ctl);
  std::thread body([&w, input, st = body_state, s = sched.get(), f = free_ctl.get()] {
    if (s) s->enter_main();
    if (f) f->enter_main();
    run_body(w, input, st.get());
    if (s) s->exit_main();
    if (f) f->exit_main();
  });

  // The calling thread is the watchdog. Without a controller there is no
  // progress signal, so watchdog_s bounds the whole trial instead.
  bool watchdog_fired = false;
  {
    std::unique_lock<std::mutex> lk(body_state->mu);
    int64_t last = progress();
    auto last_change = Clock::now();
    const auto poll = std::chrono::duration<double>(std::min(0.05, spec.watchdog_s / 4));
    while (!body_state->done) {
      body_state->cv.wait_for(lk, poll);
      if (body_state->done) break;
      int64_t now_p = progress();
      if (now_p != last) {
        last = now_p;
        last_change = Clock::now();
      } else if (std::chrono::duration<double>(Clock::now() - last_change).count() >= spec.watchdog_s) {
        watchdog_fired = true;
        break;
      }
    }
  }
  if (watchdog_fired) {
    std::string why = fmt::format(
        "watchdog: no progress for {:g} s (a thread is blocked where the scheduler cannot see it)", spec.watchdog_s);
    if (sched) sched->abort(Outcome::kHang, why);
    std::unique_lock<std::mutex> lk(body_state->mu);
    bool back = body_state->cv.wait_for(lk, std::chrono::seconds(1), [&] { return body_state->done; });
    lk.unlock();
    r.outcome = Outcome::kHang;
    r.detail = why;
    if (!back) {
      r.process_tainted = true;
      body.detach();
      detach();
      // Abandoned threads still use these.
      (void)sched.release();
      (void)free_ctl.release();
      (void)strategy.release();
      r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      return r;
    }
  }
  body.join();
  // Thread 0 ends last once it joined its children; wait for stragglers a body
  // forgot to join so the controller is not detached under them.
  if (sched) sched->wait_finished(1.0);
  if (ctl) detach();
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();

  TrialResult collected = collect_result(sched.get(), free_ctl.get(), body_state->obs, watchdog_fired);
  collected.wall_ms = r.wall_ms;
  if (watchdog_fired) {
    collected.outcome = r.outcome;
    collected.detail = r.detail;
  }
  r = std::move(collected);
  return r;
}

}  // namespace racelab
