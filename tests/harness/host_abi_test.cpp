// The engine's plain C ABI (racelab/host.h) as a foreign host sees it: this
// test links only libracelab_host.so and includes only the C header, and its
// threads are plain std::threads that call in, as a Python worker's do.
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "racelab/host.h"

namespace {

using nlohmann::json;

// Ends the trial with `obs` and returns the result, freeing the C string.
json end_trial(const json& obs) {
  char* p = racelab_host_trial_end(obs.dump().c_str());
  EXPECT_NE(p, nullptr) << racelab_host_last_error();
  json r = json::parse(p != nullptr ? p : "{}");
  racelab_host_free(p);
  return r;
}

json spec(const json& strategy, uint64_t seed) {
  return {{"workload", "abi_test"}, {"trial", 0}, {"seed", seed}, {"strategy", strategy}, {"watchdog_s", 10}};
}

// Two threads increment a counter with a point between the read and the
// write: a switch there loses an update, which the body reports as a wrong result.
json counter_trial(const json& strategy, uint64_t seed) {
  EXPECT_EQ(racelab_host_trial_begin(spec(strategy, seed).dump().c_str()), RACELAB_HOST_OK)
      << racelab_host_last_error();
  EXPECT_EQ(racelab_host_enter_main(), RACELAB_HOST_OK);
  int counter = 0;
  auto body = [&counter](int id) {
    if (racelab_host_thread_start(id) == RACELAB_HOST_OK) {
      int v = counter;
      if (racelab_host_point("counter.read") == RACELAB_HOST_OK) counter = v + 1;
    }
    racelab_host_thread_end(id);
  };
  int a = racelab_host_thread_create(), b = racelab_host_thread_create();
  EXPECT_GE(a, 1);
  EXPECT_GE(b, 1);
  std::thread ta(body, a), tb(body, b);
  EXPECT_EQ(racelab_host_join(a), RACELAB_HOST_OK);
  EXPECT_EQ(racelab_host_join(b), RACELAB_HOST_OK);
  ta.join();
  tb.join();
  EXPECT_EQ(racelab_host_exit_main(), RACELAB_HOST_OK);
  json obs = json::object();
  if (counter != 2) obs["wrong_result"] = "lost update: counter " + std::to_string(counter);
  return end_trial(obs);
}

TEST(HostAbi, RandomFindsTheLostUpdateAndItsScheduleReplays) {
  ASSERT_EQ(racelab_host_abi_version(), RACELAB_HOST_ABI_VERSION);
  json failing;
  int holds = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    json r = counter_trial({{"kind", "random"}}, seed);
    if (r.at("outcome").get<std::string>() == "holds") ++holds;
    if (r.at("outcome").get<std::string>() == "wrong_result" && failing.is_null()) failing = r;
  }
  ASSERT_FALSE(failing.is_null()) << "random never lost an update in 40 trials";
  EXPECT_GT(holds, 0) << "random never kept both updates in 40 trials";
  EXPECT_GE(failing.at("preemptions").get<int>(), 1);
  json decisions = json::array();
  for (const auto& d : failing.at("decisions"))
    decisions.push_back({{"thread", d.at("thread")}, {"point", d.at("point")}});
  for (int i = 0; i < 5; ++i) {
    json r = counter_trial({{"kind", "replay"}, {"decisions", decisions}}, 1);
    EXPECT_EQ(r.at("outcome").get<std::string>(), "wrong_result") << r.dump();
  }
}

// A lock built on block/release, as racelab.sync's Python locks are.
struct HostLock {
  std::atomic<bool> held{false};
  int lock(const char* name) {
    if (int rc = racelab_host_point(name); rc != RACELAB_HOST_OK) return rc;
    while (held.exchange(true))
      if (int rc = racelab_host_block(reinterpret_cast<uintptr_t>(this), name); rc != RACELAB_HOST_OK) return rc;
    return RACELAB_HOST_OK;
  }
  void unlock() {
    held = false;
    racelab_host_release(reinterpret_cast<uintptr_t>(this));
  }
};

TEST(HostAbi, OppositeLockOrderIsAHangAndBlockedCallsAreAborted) {
  bool deadlocked = false;
  std::atomic<int> aborted{0};
  for (uint64_t seed = 1; seed <= 40 && !deadlocked; ++seed) {
    ASSERT_EQ(racelab_host_trial_begin(spec({{"kind", "random"}}, seed).dump().c_str()), RACELAB_HOST_OK);
    ASSERT_EQ(racelab_host_enter_main(), RACELAB_HOST_OK);
    HostLock l1, l2;
    auto body = [&](int id, HostLock* first, HostLock* second) {
      if (racelab_host_thread_start(id) == RACELAB_HOST_OK) {
        if (first->lock("first") == RACELAB_HOST_OK) {
          if (second->lock("second") == RACELAB_HOST_OK)
            second->unlock();
          else
            ++aborted;
          first->unlock();
        } else {
          ++aborted;
        }
      }
      racelab_host_thread_end(id);
    };
    int a = racelab_host_thread_create(), b = racelab_host_thread_create();
    std::thread ta(body, a, &l1, &l2), tb(body, b, &l2, &l1);
    racelab_host_join(a);
    racelab_host_join(b);
    ta.join();
    tb.join();
    racelab_host_exit_main();
    json r = end_trial(json::object());
    if (r.at("outcome").get<std::string>() == "hang") {
      deadlocked = true;
      EXPECT_NE(r.at("detail").get<std::string>().find("deadlock"), std::string::npos) << r.dump();
    } else {
      EXPECT_EQ(r.at("outcome").get<std::string>(), "holds") << r.dump();
    }
  }
  EXPECT_TRUE(deadlocked) << "random never took the locks in the deadlocking order in 40 trials";
  EXPECT_GE(aborted.load(), 1) << "a thread blocked in a deadlock must get RACELAB_HOST_ABORTED";
}

// A thread that spins on a plain flag with no call into racelab, while the
// thread that would clear the flag waits for its turn: only a let-go by the
// spinner's CPU time (knob let_go_cpu_ms) ends it, and the decisions say so.
json spin_trial(int let_go_cpu_ms) {
  json s = spec({{"kind", "random"}}, 3);
  s["knobs"] = {{"let_go_cpu_ms", let_go_cpu_ms}};
  s["watchdog_s"] = 3;
  EXPECT_EQ(racelab_host_trial_begin(s.dump().c_str()), RACELAB_HOST_OK) << racelab_host_last_error();
  EXPECT_EQ(racelab_host_enter_main(), RACELAB_HOST_OK);
  std::atomic<bool> running{true}, spinning{false};
  int spinner = racelab_host_thread_create();
  std::thread t([&] {
    if (racelab_host_thread_start(spinner) == RACELAB_HOST_OK) {
      spinning = true;
      while (running.load()) {
      }
    }
    racelab_host_thread_end(spinner);
  });
  // Main waits (a yield at a time) until the spinner runs, then clears the flag.
  while (!spinning.load())
    if (racelab_host_yield("main.wait_for_spinner") == RACELAB_HOST_ABORTED) break;
  running = false;
  racelab_host_join(spinner);
  t.join();
  racelab_host_exit_main();
  return end_trial(json::object());
}

TEST(HostAbi, AThreadSpinningWithNoPointIsLetGoByItsCpuTime) {
  json r = spin_trial(50);
  EXPECT_EQ(r.at("outcome").get<std::string>(), "holds") << r.dump();
  bool let_go = false;
  for (const auto& d : r.at("decisions")) let_go = let_go || d.value("let_go", false);
  EXPECT_TRUE(let_go) << "the spinner's let-go is not in the schedule: " << r.dump();
}

TEST(HostAbi, WithoutLetGoASpinningThreadIsAHang) {
  json r = spin_trial(0);
  EXPECT_EQ(r.at("outcome").get<std::string>(), "hang") << r.dump();
}

// Threads the body does not wait for (Python's daemon threads), blocked when
// it ends: end_leftover unwinds them and the observation classifies the trial.
TEST(HostAbi, LeftoverThreadsUnwindAndTheObservationDecides) {
  for (bool with_error : {false, true}) {
    ASSERT_EQ(racelab_host_trial_begin(spec({{"kind", "random"}}, 5).dump().c_str()), RACELAB_HOST_OK);
    ASSERT_EQ(racelab_host_enter_main(), RACELAB_HOST_OK);
    int id = racelab_host_thread_create();
    std::atomic<int> rc{-5};
    std::thread t([&] {
      if (racelab_host_thread_start(id) == RACELAB_HOST_OK) rc = racelab_host_block(42, "waits.forever");
      racelab_host_thread_end(id);
    });
    racelab_host_point("main.work");
    ASSERT_EQ(racelab_host_end_leftover("a daemon thread left"), RACELAB_HOST_OK);
    racelab_host_exit_main();
    json obs = json::object();
    if (with_error) obs["errors"] = {"ValueError: from the body"};
    json r = end_trial(obs);
    t.join();
    EXPECT_EQ(r.at("outcome").get<std::string>(), with_error ? "error" : "holds") << r.dump();
    EXPECT_NE(rc.load(), RACELAB_HOST_OK);
  }
}

TEST(HostAbi, OutsideATrialEverythingRunsFreely) {
  EXPECT_EQ(racelab_host_yield("a.sleep"), RACELAB_HOST_FREE);
  EXPECT_EQ(racelab_host_managed(), 0);
  EXPECT_EQ(racelab_host_point("anything"), RACELAB_HOST_OK);
  EXPECT_EQ(racelab_host_thread_create(), -1);
  EXPECT_EQ(racelab_host_block(1, "nothing"), RACELAB_HOST_OK);
  EXPECT_EQ(racelab_host_trial_end("{}"), nullptr);
  EXPECT_NE(std::string(racelab_host_last_error()).find("no trial"), std::string::npos);
  EXPECT_EQ(racelab_host_trial_begin("{not json"), RACELAB_HOST_ERROR);
  EXPECT_NE(std::string(racelab_host_last_error()).find("trial spec"), std::string::npos);
}

}  // namespace
