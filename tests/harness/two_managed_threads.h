// tests/harness/two_managed_threads.h -- driving the Scheduler directly, as a
// host (the preload shim, the Python host) drives it: two managed threads and
// a strategy that never preempts. Shared by the timed-wait and step-out tests.
#ifndef RACELAB_TESTS_HARNESS_TWO_MANAGED_THREADS_H_
#define RACELAB_TESTS_HARNESS_TWO_MANAGED_THREADS_H_

#include <cstdint>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/scheduler.h"
#include "engine/strategy.h"

namespace racelab::testing {

constexpr int64_t kSecond = 1000000000;

// Non-preemptive: keep the requester while it can run.
inline std::unique_ptr<Strategy> non_preemptive() {
  return make_strategy({{"kind", "follow"}, {"prefix", nlohmann::json::array()}}, 1);
}

// Thread 0 runs `main_body(child_id)`, thread 1 runs `child_body()`; thread 0 joins at the end.
template <class Main, class Child>
void run_two(Scheduler& s, Main main_body, Child child_body) {
  std::thread main_thread([&] {
    s.enter_main();
    const int id = s.on_thread_create();
    std::thread child([&, id] {
      s.on_thread_start(id);
      child_body();
      s.on_thread_end(id);
    });
    main_body(id);
    s.on_join(id);
    child.join();
    s.exit_main();
  });
  main_thread.join();
}

}  // namespace racelab::testing

#endif  // RACELAB_TESTS_HARNESS_TWO_MANAGED_THREADS_H_
