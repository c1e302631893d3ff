// Test-local workloads: tiny racy programs with interleaving points, standing in
// for the compile layer so the engine's tests need no LibTorch.
//
//   t_flag      save/set/restore of one global flag by a "tracer" (sets true) and
//               an "eager compile" (sets false, then takes the compile lock):
//               the lost restore leaves it stuck true -> stuck_state.
//               knobs: atomic (std::atomic<bool> instead of a plain bool).
//               mitigations: none, global_lock (whole operation under one lock).
//   t_deadlock  two racelab::Mutexes taken in opposite orders -> hang.
//               mitigations: none, ordered.
//   t_counter   lost update on a shared counter -> wrong_result.
//   t_exclusive records how many managed threads were ever inside at once.
//   t_outcome   produces the class named by knob `produce` (holds, error,
//               stuck_state, wrong_result, silent_fallback, segv, abort, os_hang).
#ifndef RACELAB_TESTS_HARNESS_TEST_WORKLOADS_H_
#define RACELAB_TESTS_HARNESS_TEST_WORKLOADS_H_

#include "engine/trial.h"

namespace racelab_test {
// Runs one in-process trial with the given strategy spec.
racelab::TrialSpec spec(const std::string& workload, nlohmann::json strategy, uint64_t seed = 1,
                        nlohmann::json knobs = nlohmann::json::object(), const std::string& mitigation = "none",
                        int threads = 2);
}  // namespace racelab_test

#endif
