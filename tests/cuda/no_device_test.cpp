// tests/cuda/no_device_test.cpp -- on a machine without a CUDA device (this
// project's CI) the real workload says so instead of running: the reason names
// the runtime's answer, and a trial reports bad_input, never a race outcome.
// Skipped where a device is present.
#include <string>

#include <gtest/gtest.h>

#include "cuda/graph_capture.h"

namespace racelab::cuda {
namespace {

TEST(CudaNoDevice, TheReasonNamesWhatTheRuntimeAnswered) {
  const std::string& reason = no_device_reason();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is here";
  EXPECT_EQ(reason.rfind("no CUDA device: cudaGetDeviceCount ", 0), 0u) << reason;
}

TEST(CudaNoDevice, ATrialIsBadInputNotAnOutcome) {
  if (no_device_reason().empty()) GTEST_SKIP() << "a CUDA device is here";
  racelab::TrialInput in;
  in.knobs = default_knobs();
  in.mitigation = "none";
  in.threads = 4;
  const auto obs = run_trial(in);
  EXPECT_TRUE(obs.metrics.value("bad_input", false));
  ASSERT_EQ(obs.errors.size(), 1u);
  EXPECT_EQ(obs.errors[0], no_device_reason());
}

}  // namespace
}  // namespace racelab::cuda
