// tests/cuda/child_protocol_test.cpp -- the isolate_process child's lines come back
// into the parent's trial log, and a broken child is noticed (cuda/capture_child.h).
#include <string>

#include <gtest/gtest.h>

#include "cuda/capture_child.h"

namespace racelab::cuda {
namespace {

TEST(CudaChild, LinesBecomeCallsReplaysAndMismatches) {
  TrialLog log;
  LogSink sink(&log);
  std::string problem;
  ASSERT_TRUE(parse_capture_child_output(
      "call cudaStreamEndCapture 901\nreplayed\nreplayed\nmismatch workspace[3] = 0\ndone\n", sink, &problem))
      << problem;
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.calls[0].api, "child cudaStreamEndCapture");
  EXPECT_EQ(log.calls[0].code, cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(log.captures_replayed, 2);
  ASSERT_EQ(log.replay_mismatches.size(), 1u);
  EXPECT_EQ(log.replay_mismatches[0], "child: workspace[3] = 0");
}

TEST(CudaChild, AChildThatStoppedEarlyOrSaidNonsenseIsAProblem) {
  TrialLog log;
  LogSink sink(&log);
  std::string problem;
  EXPECT_FALSE(parse_capture_child_output("replayed\n", sink, &problem));
  EXPECT_NE(problem.find("no 'done' line"), std::string::npos);
  EXPECT_FALSE(parse_capture_child_output("call cudaMalloc\ndone\n", sink, &problem));
  EXPECT_NE(problem.find("expected: call API CODE"), std::string::npos);
  EXPECT_FALSE(parse_capture_child_output("hello\ndone\n", sink, &problem));
  EXPECT_NE(problem.find("unknown line 'hello'"), std::string::npos);
}

TEST(CudaChild, ArgumentsCarryTheSpec) {
  CaptureSpec spec;
  spec.kernels = 3;
  spec.bytes = 4096;
  EXPECT_EQ(capture_child_args("x", spec), (std::vector<std::string>{"x", "--kernels", "3", "--bytes", "4096"}));
}

}  // namespace
}  // namespace racelab::cuda
