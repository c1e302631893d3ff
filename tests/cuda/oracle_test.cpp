// tests/cuda/oracle_test.cpp -- the real race's oracle maps the runtime's error
// codes to the outcome classes the CPU model uses (cuda/capture_oracle.h), and
// the mitigations map to their CUDA forms (cuda/graph_capture.h). No device needed.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cuda/capture_oracle.h"
#include "cuda/graph_capture.h"
#include "engine/outcome.h"

namespace racelab::cuda {
namespace {

std::string classify(const TrialLog& log, std::string* detail = nullptr) {
  std::string d;
  const auto outcome = racelab::classify_observation(observe(log), &d);
  if (detail) *detail = d;
  return racelab::outcome_name(outcome);
}

TEST(CudaOracle, RefusedAllocationAndInvalidatedCaptureAreErrorsNamingTheCodes) {
  TrialLog log;
  log.calls.push_back({Role::kLoader, 1, "cudaHostAlloc", cudaErrorStreamCaptureUnsupported, true});
  log.calls.push_back({Role::kCapture, 0, "cudaStreamEndCapture", cudaErrorStreamCaptureInvalidated, false});
  std::string detail;
  EXPECT_EQ(classify(log, &detail), "error");
  EXPECT_NE(detail.find("loader thread 1: cudaHostAlloc: cudaErrorStreamCaptureUnsupported"), std::string::npos)
      << detail;
  const auto obs = observe(log);
  ASSERT_EQ(obs.errors.size(), 2u);
  EXPECT_NE(obs.errors[1].find("capture thread 0: cudaStreamEndCapture: cudaErrorStreamCaptureInvalidated"),
            std::string::npos);
  EXPECT_EQ(obs.metrics["unsupported"].get<int64_t>(), 1);
  EXPECT_EQ(obs.metrics["invalidated"].get<int64_t>(), 1);
}

TEST(CudaOracle, AnyOtherFailingCallIsAnErrorToo) {
  TrialLog log;
  log.calls.push_back({Role::kWorker, 3, "cudaMalloc", cudaErrorMemoryAllocation, false});
  EXPECT_EQ(classify(log), "error");
  EXPECT_EQ(observe(log).metrics["other_cuda_errors"].get<int64_t>(), 1);
}

TEST(CudaOracle, SuccessfulCallsHoldWhateverTheBookkeepingSawOutsideRelaxedMode) {
  // thread_local mode: a worker's cudaMalloc during the capture is allowed, and is no failure.
  TrialLog log;
  log.calls.push_back({Role::kWorker, 2, "cudaMalloc", cudaSuccess, true});
  log.captures_replayed = 2;
  EXPECT_EQ(classify(log), "holds");
  EXPECT_EQ(observe(log).metrics["unsafe_in_capture"].get<int64_t>(), 1);
}

TEST(CudaOracle, RelaxedModeLettingAnUnsafeCallThroughIsSilent) {
  TrialLog log;
  log.relaxed = true;
  log.calls.push_back({Role::kLoader, 1, "cudaMalloc", cudaSuccess, true});
  log.calls.push_back({Role::kWorker, 2, "cudaMalloc", cudaSuccess, false});  // no capture open: nothing hidden
  EXPECT_EQ(classify(log), "silent_fallback");
  EXPECT_EQ(observe(log).silent_fallbacks, 1);
  // Relaxed with nothing inside a capture holds.
  TrialLog quiet;
  quiet.relaxed = true;
  quiet.calls.push_back({Role::kWorker, 2, "cudaMalloc", cudaSuccess, false});
  EXPECT_EQ(classify(quiet), "holds");
}

TEST(CudaOracle, ARefusalInRelaxedModeIsStillAnError) {
  TrialLog log;
  log.relaxed = true;
  log.calls.push_back({Role::kLoader, 1, "cudaMalloc", cudaSuccess, true});
  log.calls.push_back({Role::kWorker, 2, "cudaMalloc", cudaErrorStreamCaptureUnsupported, true});
  EXPECT_EQ(classify(log), "error");
}

TEST(CudaOracle, AReplayedGraphWithWrongValuesIsAWrongResult) {
  TrialLog log;
  log.replay_mismatches.push_back("the replayed graph left workspace[0] = 0, expected 1");
  std::string detail;
  EXPECT_EQ(classify(log, &detail), "wrong_result");
  EXPECT_EQ(detail, "the replayed graph left workspace[0] = 0, expected 1");
}

TEST(CudaOracle, AChildThatCouldNotRunIsAnError) {
  TrialLog log;
  log.problems.push_back("isolate_process: cannot start x: No such file or directory");
  EXPECT_EQ(classify(log), "error");
}

TEST(CudaOracle, CodeNamesComeFromTheRuntimeWithoutADevice) {
  EXPECT_EQ(code_name(cudaErrorStreamCaptureUnsupported), "cudaErrorStreamCaptureUnsupported");
  EXPECT_EQ(code_name(cudaErrorStreamCaptureInvalidated), "cudaErrorStreamCaptureInvalidated");
  EXPECT_EQ(code_name(static_cast<cudaError_t>(12345)), "cudaError 12345");
}

TEST(CudaPlan, EachMitigationHasItsCudaForm) {
  EXPECT_EQ(plan_for("none").mode, cudaStreamCaptureModeGlobal);
  EXPECT_FALSE(plan_for("none").lock || plan_for("none").warm_pool || plan_for("none").child_process);
  EXPECT_TRUE(plan_for("global_lock").lock);
  EXPECT_EQ(plan_for("global_lock").mode, cudaStreamCaptureModeGlobal);
  EXPECT_EQ(plan_for("isolate_thread").mode, cudaStreamCaptureModeThreadLocal);
  EXPECT_TRUE(plan_for("precompile").warm_pool);
  EXPECT_TRUE(plan_for("isolate_process").child_process);
  EXPECT_EQ(plan_for("disable_check").mode, cudaStreamCaptureModeRelaxed);
  EXPECT_THROW(plan_for("rw_lock"), std::invalid_argument);
  for (const auto& m : mitigations()) EXPECT_NO_THROW(plan_for(m)) << m;
}

TEST(CudaPlan, TheScenarioSweepsEveryMitigationOfTheWorkload) {
  std::ifstream in(std::string(RACELAB_SOURCE_DIR) + "/scenarios/cuda/cuda_graph_capture_cuda.json");
  ASSERT_TRUE(in.good());
  const auto scenario = nlohmann::json::parse(in);
  EXPECT_EQ(scenario["workload"].get<std::string>(), kWorkloadName);
  EXPECT_EQ(scenario["mitigations"].get<std::vector<std::string>>(), mitigations());
}

TEST(CudaPlan, KnobsOutOfRangeAreRefused) {
  auto k = default_knobs();
  EXPECT_NO_THROW(check_knobs(k));
  k["kernels"] = 0;
  EXPECT_THROW(check_knobs(k), racelab::KnobError);
  k = default_knobs();
  k["bytes"] = int64_t{1} << 40;
  EXPECT_THROW(check_knobs(k), racelab::KnobError);
}

}  // namespace
}  // namespace racelab::cuda
