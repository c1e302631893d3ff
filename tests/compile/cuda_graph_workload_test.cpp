// The cuda_graph_capture workload (compile/cuda_graph_workload.h) under forced
// interleavings (ScriptController, no sleeps): the race needs the loader's or a
// worker's allocation to fall inside the capture; every mitigation's verdict
// under that same interleaving is what scenarios/cuda_graph_capture.json
// expects, and each side's error carries the CUDA enum name.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "script_controller.h"
#include "compile/cuda_capture.h"
#include "compile/cuda_graph_workload.h"
#include "compile/point_names.h"

namespace racelab::compile::cuda {
namespace {

using racelab_test::ScriptController;
using Steps = std::vector<ScriptController::Step>;
namespace P = racelab::compile::points;

// Thread 1 is the capturer, 2 the loader, 3 the first worker.
const Steps kInsideCapture{{1, P::kCudaEndCapture}, {2, ""}, {1, ""}};   // the loader runs while the capture is open
const Steps kWorkerInside{{1, P::kCudaEndCapture}, {3, ""}, {1, ""}};    // a worker does
const Steps kBeforeCapture{{2, ""}, {1, ""}};                            // the loader is done before it begins

struct Forced {
  MicroResult result;
  std::vector<std::string> skipped;
};

Forced force(const std::string& mitigation, const Steps& steps, int threads = 2) {
  reset_cuda_for_trial();
  CudaGraphConfig c;
  c.mitigation = mitigation;
  c.threads = threads;
  ScriptController ctl(steps);
  Forced f;
  ctl.run([&] { f.result = run_cuda_graph_capture(c); });
  f.skipped = ctl.skipped();
  reset_cuda_for_trial();
  return f;
}

// The outcome classes the harness would derive, joined with "+".
std::string verdict(const MicroResult& r) {
  std::string v;
  auto add = [&](const char* c) { v += (v.empty() ? "" : "+") + std::string(c); };
  if (!r.stuck_state.empty()) add("stuck_state");
  if (!r.wrong_result.empty()) add("wrong_result");
  if (!r.errors.empty()) add("error");
  if (r.silent_fallbacks > 0) add("silent_fallback");
  return v.empty() ? "holds" : v;
}

bool has(const std::vector<std::string>& errors, const std::string& who, const std::string& what) {
  return std::any_of(errors.begin(), errors.end(), [&](const std::string& e) {
    return e.rfind(who, 0) == 0 && e.find(what) != std::string::npos;
  });
}

TEST(CudaGraphWorkload, ThePinMemoryThreadInsideAGlobalCaptureFailsAndTheCapturerSeesInvalidated) {
  const Forced f = force("none", kInsideCapture);
  EXPECT_EQ(verdict(f.result), "error");
  EXPECT_TRUE(has(f.result.errors, "loader: cudaHostAlloc", "cudaErrorStreamCaptureUnsupported"))
      << ::testing::PrintToString(f.result.errors);
  EXPECT_TRUE(has(f.result.errors, "capturer: cudaStreamEndCapture", "cudaErrorStreamCaptureInvalidated"))
      << ::testing::PrintToString(f.result.errors);
  EXPECT_EQ(f.result.errors.size(), 2u);
  EXPECT_EQ(f.result.metrics.at("invalidations"), 1);
  EXPECT_EQ(f.result.metrics.at("graph_replays"), 0);  // no graph
}

TEST(CudaGraphWorkload, AWorkersCacheMissInsideAGlobalCaptureFailsToo) {
  const Forced f = force("none", kWorkerInside, 3);
  EXPECT_TRUE(has(f.result.errors, "worker 3: cudaMalloc", "cudaErrorStreamCaptureUnsupported"))
      << ::testing::PrintToString(f.result.errors);
  EXPECT_TRUE(has(f.result.errors, "capturer:", "cudaErrorStreamCaptureInvalidated"))
      << ::testing::PrintToString(f.result.errors);
}

TEST(CudaGraphWorkload, ItIsARaceTheSameThreadsInAnotherOrderHold) {
  const Forced f = force("none", kBeforeCapture);
  EXPECT_EQ(verdict(f.result), "holds") << ::testing::PrintToString(f.result.errors);
  EXPECT_EQ(f.result.metrics.at("graph_replays"), 1);
}

TEST(CudaGraphWorkload, EveryMitigationUnderTheRacingInterleaving) {
  // What scenarios/cuda_graph_capture.json expects of each.
  const std::vector<std::pair<std::string, std::string>> want{
      {"none", "error"},
      {"disable_check", "silent_fallback"},
      {"global_lock", "holds"},
      {"precompile", "holds"},
      {"isolate_thread", "holds"},
      {"isolate_process", "holds"},
  };
  ASSERT_EQ(cuda_graph_mitigations().size(), want.size());
  for (const auto& [m, v] : want) {
    const Forced f = force(m, kInsideCapture, 3);
    EXPECT_EQ(verdict(f.result), v) << m << ": " << ::testing::PrintToString(f.result.errors) << " "
                                    << f.result.wrong_result << f.result.stuck_state;
    if (v == "holds") {
      EXPECT_EQ(f.result.metrics.at("graph_replays"), 1) << m;  // and the replay was checked
    }
  }
}

TEST(CudaGraphWorkload, GlobalLockHoldsBecauseTheLoaderCannotRunInsideTheCapture) {
  const Forced f = force("global_lock", kInsideCapture);
  EXPECT_EQ(verdict(f.result), "holds");
  EXPECT_EQ(f.skipped, std::vector<std::string>{"2@<end>"});  // the interleaving was prevented
}

TEST(CudaGraphWorkload, RelaxedModeLetsEveryCallThroughAndCountsThem) {
  const Forced f = force("disable_check", kInsideCapture);
  EXPECT_TRUE(f.result.errors.empty()) << ::testing::PrintToString(f.result.errors);
  // 2 batches in flight: 2 cudaHostAlloc and 2 cudaMalloc while the capture was open.
  EXPECT_EQ(f.result.silent_fallbacks, 4);
  EXPECT_EQ(f.result.metrics.at("prohibited_calls"), 0);
  EXPECT_EQ(f.result.metrics.at("graph_replays"), 1);
}

TEST(CudaGraphWorkload, ThreadLocalModeLetsTheLoaderThroughAndHidesNothing) {
  const Forced f = force("isolate_thread", kInsideCapture);
  EXPECT_EQ(f.result.silent_fallbacks, 0);
  EXPECT_EQ(f.result.metrics.at("prohibited_calls"), 0);
  EXPECT_GT(f.result.metrics.at("cache_misses"), 0);  // the loader's misses did reach the runtime
}

TEST(CudaGraphWorkload, PrecompileLeavesNothingForTheLoaderToAllocate) {
  const Forced f = force("precompile", kInsideCapture, 3);
  // Only the capture's own private-pool blocks (2 kernels) reach cudaMalloc during the trial.
  EXPECT_EQ(f.result.metrics.at("runtime_allocs_in_trial"), 2);
  EXPECT_EQ(f.result.metrics.at("prohibited_calls"), 0);
}

// capture_pins: the capturer's own pinned staging block inside the capture.
Forced force_pins(const std::string& mitigation, const Steps& steps) {
  reset_cuda_for_trial();
  CudaGraphConfig c;
  c.mitigation = mitigation;
  c.capture_pins = true;
  ScriptController ctl(steps);
  Forced f;
  ctl.run([&] { f.result = run_cuda_graph_capture(c); });
  reset_cuda_for_trial();
  return f;
}

TEST(CudaGraphWorkload, RelaxedModeLetsTheGraphCaptureAPinnedBlockItDoesNotOwn) {
  // The capture pins (a miss: cudaHostAlloc during its own capture), stages its
  // input, lets the block go; the loader then gets that block for its batch.
  const Forced relaxed = force_pins("disable_check", kInsideCapture);
  EXPECT_TRUE(relaxed.result.errors.empty()) << ::testing::PrintToString(relaxed.result.errors);
  EXPECT_NE(relaxed.result.wrong_result.find("capturer: the graph's replay"), std::string::npos)
      << relaxed.result.wrong_result;
  EXPECT_EQ(relaxed.result.metrics.at("graph_replays"), 1);
  // Global and thread_local mode refuse the capturer's own call instead: loud.
  for (const char* m : {"none", "isolate_thread"}) {
    const Forced f = force_pins(m, kInsideCapture);
    EXPECT_TRUE(has(f.result.errors, "capturer: cudaHostAlloc (pin_memory, in capture)",
                    "cudaErrorStreamCaptureUnsupported"))
        << m << ": " << ::testing::PrintToString(f.result.errors);
    EXPECT_EQ(f.result.wrong_result, "") << m;
  }
  // Knob off, the same interleaving replays correctly under relaxed mode.
  EXPECT_EQ(force("disable_check", kInsideCapture).result.wrong_result, "");
}

TEST(CudaGraphWorkload, RefusesWhatItDoesNotModel) {
  CudaGraphConfig c;
  c.mitigation = "rw_lock";
  EXPECT_THROW(run_cuda_graph_capture(c), std::invalid_argument);
  c.mitigation = "none";
  c.threads = 1;
  EXPECT_THROW(run_cuda_graph_capture(c), std::invalid_argument);
}

}  // namespace
}  // namespace racelab::compile::cuda
