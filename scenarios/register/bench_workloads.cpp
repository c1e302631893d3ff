// scenarios/register/bench_workloads.cpp -- workloads only `racelab bench` runs.
//
// bench_ping_pong: N threads that do nothing but reach interleaving points, so a
// controlled trial of it measures the scheduler's handoff cost and nothing else.
// LibTorch-free.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "racelab/point.h"
#include "racelab/sync.h"
#include "racelab/workload.h"

namespace {

racelab::Observation ping_pong(const racelab::TrialInput& in) {
  const int64_t points = in.knobs.value("points", int64_t{2000});
  std::vector<racelab::Thread> threads;
  for (int t = 0; t < in.threads; ++t)
    threads.emplace_back([points] {
      for (int64_t i = 0; i < points; ++i) racelab::point("bench.ping_pong");
    });
  for (auto& t : threads) t.join();
  return {};
}
racelab::WorkloadRegistrar ping_pong_registrar{racelab::Workload{
    "bench_ping_pong", "Benchmark only: N threads that do nothing but reach interleaving points",
    nlohmann::json{{"points", 2000}}, {"none"}, false, [] {}, &ping_pong}};

}  // namespace
