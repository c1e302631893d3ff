// tests/cuda/torch_graph_gpu_test.cpp (label gpu) -- the at::cuda::CUDAGraph form
// of the capture race (cuda/torch/graph_capture.h), built only against a LibTorch
// 2.x with CUDA: LibTorch's messages map back to the runtime's codes, `none`
// reproduces, the fixes hold, relaxed mode is silent. Skips without a device.
#include <string>

#include <gtest/gtest.h>

#include "cuda/graph_capture.h"
#include "cuda/torch/graph_capture.h"
#include "engine/cell.h"

namespace racelab::cuda::torch_form {
namespace {

TEST(TorchGraphMessages, TheRuntimesStringsMapBackToCodes) {
  EXPECT_EQ(code_in_message(std::string("CUDA error: ") + cudaGetErrorString(cudaErrorStreamCaptureUnsupported)),
            cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(code_in_message(std::string("CUDA error: ") + cudaGetErrorString(cudaErrorStreamCaptureInvalidated)),
            cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(code_in_message("something else"), cudaErrorUnknown);
}

racelab::CellSummary cell(const std::string& mitigation, int64_t trials) {
  racelab::CellSpec spec;
  spec.workload = kWorkloadName;
  spec.mitigation = mitigation;
  spec.strategy = "random";
  spec.threads = 4;
  spec.max_trials = trials;
  spec.supervised = false;
  return racelab::run_cell(spec, [](const racelab::TrialRecord&) {});
}

class TorchGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_device_reason().empty()) GTEST_SKIP() << no_device_reason();
  }
};

TEST_F(TorchGraph, NoneReproducesAsAnError) {
  const auto sum = cell("none", 20);
  EXPECT_GT(sum.failures, 0);
  EXPECT_EQ(sum.by_outcome.count("error") ? sum.by_outcome.at("error") : 0, sum.failures);
}

TEST_F(TorchGraph, TheFixesHold) {
  for (const char* m : {"global_lock", "isolate_thread", "precompile"}) EXPECT_EQ(cell(m, 10).failures, 0) << m;
}

TEST_F(TorchGraph, RelaxedModeIsSilent) {
  const auto sum = cell("disable_check", 20);
  EXPECT_GT(sum.failures, 0);
  EXPECT_EQ(sum.by_outcome.count("silent_fallback") ? sum.by_outcome.at("silent_fallback") : 0, sum.failures);
}

}  // namespace
}  // namespace racelab::cuda::torch_form
