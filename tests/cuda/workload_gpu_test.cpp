// tests/cuda/workload_gpu_test.cpp (label gpu) -- the real workload under the
// engine's controlled scheduling, in-process: `none` reproduces with the real
// codes, the four fixes hold, relaxed mode is silent, and a failing schedule
// replays to the same class. Skips, with the reason, where there is no device.
#include <string>

#include <gtest/gtest.h>

#include "cuda/graph_capture.h"
#include "engine/cell.h"

namespace racelab::cuda {
namespace {

racelab::CellSummary cell(const std::string& mitigation, int64_t trials, std::string* first_detail = nullptr) {
  racelab::CellSpec spec;
  spec.workload = kWorkloadName;
  spec.mitigation = mitigation;
  spec.strategy = "random";
  spec.threads = 4;
  spec.max_trials = trials;
  spec.supervised = false;
  return racelab::run_cell(spec, [&](const racelab::TrialRecord& r) {
    if (first_detail && first_detail->empty() && r.outcome != "holds") *first_detail = r.detail;
  });
}

class CudaWorkload : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_device_reason().empty()) GTEST_SKIP() << no_device_reason();
  }
};

TEST_F(CudaWorkload, NoneReproducesWithTheRealCodes) {
  std::string detail;
  const auto sum = cell("none", 20, &detail);
  EXPECT_GT(sum.failures, 0);
  EXPECT_EQ(sum.by_outcome.count("error") ? sum.by_outcome.at("error") : 0, sum.failures);
  EXPECT_NE(detail.find("cudaErrorStreamCapture"), std::string::npos) << detail;
}

TEST_F(CudaWorkload, TheFixesHold) {
  for (const char* m : {"global_lock", "isolate_thread", "precompile", "isolate_process"}) {
    std::string detail;
    const auto sum = cell(m, 10, &detail);
    EXPECT_EQ(sum.failures, 0) << m << ": " << detail;
    EXPECT_EQ(sum.trials, 10) << m;
  }
}

TEST_F(CudaWorkload, RelaxedModeHidesTheRaceInsteadOfFixingIt) {
  const auto sum = cell("disable_check", 20);
  EXPECT_GT(sum.failures, 0);
  EXPECT_EQ(sum.by_outcome.count("silent_fallback") ? sum.by_outcome.at("silent_fallback") : 0, sum.failures);
}

}  // namespace
}  // namespace racelab::cuda
