#include "test_workloads.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "racelab/point.h"
#include "racelab/sync.h"
#include "racelab/workload.h"

namespace racelab_test {

racelab::TrialSpec spec(const std::string& workload, nlohmann::json strategy, uint64_t seed, nlohmann::json knobs,
                        const std::string& mitigation, int threads) {
  racelab::TrialSpec s;
  s.workload = workload;
  s.strategy = std::move(strategy);
  s.strategy_name = s.strategy.value("kind", "");
  s.seed = seed;
  s.knobs = std::move(knobs);
  s.mitigation = mitigation;
  s.threads = threads;
  s.watchdog_s = 2;
  return s;
}

}  // namespace racelab_test

namespace {

using racelab::Observation;
using racelab::TrialInput;

// ---- t_flag -------------------------------------------------------------
bool g_plain_flag = false;
std::atomic<bool> g_atomic_flag{false};
racelab::Mutex g_compile_lock{"compile_lock"};
racelab::Mutex g_global_lock{"global_lock"};

template <class Flag>
void flag_op(Flag& flag, bool tracer, bool global_lock) {
  std::unique_lock<racelab::Mutex> outer(g_global_lock, std::defer_lock);
  if (global_lock) outer.lock();
  if (tracer) {
    bool prev = flag;
    racelab::point("trace.save");
    flag = true;
    racelab::point("trace.flag_set");
    racelab::point("trace.body");
    flag = prev;
    racelab::point("trace.restore");
  } else {
    bool prev = flag;
    racelab::point("eager.save");
    flag = false;
    racelab::point("eager.flag_cleared");
    std::lock_guard<racelab::Mutex> lk(g_compile_lock);
    racelab::point("eager.compile");
    flag = prev;
  }
}

Observation run_flag(const TrialInput& in) {
  bool atomic = in.knobs.value("atomic", false);
  bool global_lock = in.mitigation == "global_lock";
  std::vector<racelab::Thread> threads;
  for (int i = 0; i < in.threads; ++i) {
    threads.emplace_back([=] {
      if (atomic)
        flag_op(g_atomic_flag, i % 2 == 0, global_lock);
      else
        flag_op(g_plain_flag, i % 2 == 0, global_lock);
    });
  }
  for (auto& t : threads) t.join();
  Observation obs;
  bool stuck = atomic ? g_atomic_flag.load() : g_plain_flag;
  if (stuck) obs.stuck_state = "capture flag stuck true after all threads joined";
  return obs;
}

racelab::WorkloadRegistrar flag_reg{{
    "t_flag", "lost restore of a global flag", {{"atomic", false}}, {"none", "global_lock"}, false,
    [] {
      g_plain_flag = false;
      g_atomic_flag = false;
    },
    run_flag}};

// ---- t_deadlock ---------------------------------------------------------
racelab::Mutex g_m1{"lock_a"};
racelab::Mutex g_m2{"lock_b"};

racelab::WorkloadRegistrar deadlock_reg{{
    "t_deadlock", "two locks, opposite order", {}, {"none", "ordered"}, false, [] {},
    [](const TrialInput& in) {
      bool ordered = in.mitigation == "ordered";
      std::vector<racelab::Thread> threads;
      for (int i = 0; i < in.threads; ++i) {
        threads.emplace_back([=] {
          racelab::Mutex& first = (i % 2 == 0 || ordered) ? g_m1 : g_m2;
          racelab::Mutex& second = (i % 2 == 0 || ordered) ? g_m2 : g_m1;
          std::lock_guard<racelab::Mutex> a(first);
          racelab::point("between_locks");
          std::lock_guard<racelab::Mutex> b(second);
        });
      }
      for (auto& t : threads) t.join();
      return Observation{};
    }}};

// ---- t_counter ----------------------------------------------------------
int g_counter = 0;
racelab::WorkloadRegistrar counter_reg{{
    "t_counter", "lost update", {{"increments", 2}}, {"none"}, false, [] { g_counter = 0; },
    [](const TrialInput& in) {
      int n = in.knobs.value("increments", 2);
      std::vector<racelab::Thread> threads;
      for (int i = 0; i < in.threads; ++i) {
        threads.emplace_back([=] {
          for (int k = 0; k < n; ++k) {
            racelab::point("counter.read");
            int v = g_counter;
            racelab::point("counter.write");
            g_counter = v + 1;
          }
        });
      }
      for (auto& t : threads) t.join();
      Observation obs;
      if (g_counter != in.threads * n)
        obs.wrong_result = "counter " + std::to_string(g_counter) + " != " + std::to_string(in.threads * n);
      obs.metrics["counter"] = g_counter;
      return obs;
    }}};

// ---- t_exclusive --------------------------------------------------------
std::atomic<int> g_inside{0};
std::atomic<int> g_max_inside{0};
racelab::WorkloadRegistrar exclusive_reg{{
    "t_exclusive", "how many managed threads ever ran at once", {{"rounds", 20}}, {"none"}, false,
    [] {
      g_inside = 0;
      g_max_inside = 0;
    },
    [](const TrialInput& in) {
      int rounds = in.knobs.value("rounds", 20);
      std::vector<racelab::Thread> threads;
      for (int i = 0; i < in.threads; ++i) {
        threads.emplace_back([=] {
          for (int r = 0; r < rounds; ++r) {
            racelab::point("exclusive.before");
            int now = ++g_inside;
            int prev = g_max_inside.load();
            while (now > prev && !g_max_inside.compare_exchange_weak(prev, now)) {
            }
            // Spin a little outside any point: a second running thread would overlap here.
            for (volatile int s = 0; s < 2000; s = s + 1) {
            }
            --g_inside;
          }
        });
      }
      for (auto& t : threads) t.join();
      Observation obs;
      obs.metrics["max_inside"] = g_max_inside.load();
      return obs;
    }}};

// ---- t_prepared ---------------------------------------------------------
// A workload with a prepare (racelab/workload.h): it notes the input it was
// given and sleeps knob prepare_ms; the body is wrong_result unless prepare
// ran for this very trial, with the body's input.
std::string g_prepared_for;  // the input prepare saw last, as text

std::string input_text(const TrialInput& in) {
  return in.mitigation + "/" + std::to_string(in.seed) + "/" + std::to_string(in.threads) + "/" + in.knobs.dump();
}

racelab::Workload prepared_workload() {
  racelab::Workload w{"t_prepared",
                      "notes its input in prepare, which sleeps knob prepare_ms; the body checks the note",
                      {{"prepare_ms", 0}},
                      {"none", "other"},
                      false,
                      [] { g_prepared_for.clear(); },
                      [](const TrialInput& in) {
                        Observation obs;
                        if (g_prepared_for != input_text(in))
                          obs.wrong_result = "prepare saw '" + g_prepared_for + "', the body '" + input_text(in) + "'";
                        g_prepared_for.clear();
                        return obs;
                      }};
  w.prepare = [](const TrialInput& in) {
    g_prepared_for = input_text(in);
    std::this_thread::sleep_for(std::chrono::milliseconds(in.knobs.value("prepare_ms", 0)));
  };
  return w;
}
racelab::WorkloadRegistrar prepared_reg{prepared_workload()};

// ---- t_outcome ----------------------------------------------------------
racelab::WorkloadRegistrar outcome_reg{{
    "t_outcome", "produces the outcome named by knob produce", {{"produce", "holds"}}, {"none"}, false, [] {},
    [](const TrialInput& in) {
      std::string what = in.knobs.value("produce", "holds");
      Observation obs;
      std::string error;
      racelab::Thread t([&] {
        racelab::point("outcome.child");
        try {
          if (what == "error") throw std::runtime_error("Detected that you are using FX to symbolically trace");
          if (what == "segv") std::raise(SIGSEGV);
          if (what == "abort") std::abort();
          if (what == "sleep") std::this_thread::sleep_for(std::chrono::seconds(1));
          if (what == "raise_term") std::raise(SIGTERM);
          // Another process kills this worker, as the OOM killer or an operator would.
          if (what == "killed_by_other_kill" || what == "killed_by_other_term") {
            const pid_t worker = ::getpid();
            const int sig = what == "killed_by_other_kill" ? SIGKILL : SIGTERM;
            if (::fork() == 0) {
              ::kill(worker, sig);
              ::_exit(0);
            }
            std::this_thread::sleep_for(std::chrono::seconds(10));
          }
          if (what == "os_hang") {
            std::promise<void> never;
            never.get_future().wait();  // blocked in the OS: only the watchdog can see it
          }
        } catch (const std::exception& e) {
          error = e.what();
        }
      });
      t.join();
      if (!error.empty()) obs.errors.push_back(error);
      if (what == "stuck_state") obs.stuck_state = "flag left true";
      if (what == "wrong_result") obs.wrong_result = "output differs from reference";
      if (what == "silent_fallback") obs.silent_fallbacks = 3;
      // A wrong result that leaves the process unfit for more trials (engine/worker.h).
      if (what == "unfit") {
        obs.wrong_result = "output differs from reference; the heap may be corrupted";
        obs.metrics["fresh_worker_after"] = 1;
      }
      return obs;
    }}};

}  // namespace
