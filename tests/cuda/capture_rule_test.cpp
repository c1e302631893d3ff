// tests/cuda/capture_rule_test.cpp (label gpu) -- the CUDA rule the race rests on,
// checked on the real runtime with a forced order (no scheduler): thread A begins a
// capture, thread B calls cudaMalloc / cudaHostAlloc while it is open, A ends it.
//   global:       B is refused (cudaErrorStreamCaptureUnsupported) and A's end
//                 says cudaErrorStreamCaptureInvalidated;
//   thread_local: both succeed;
//   relaxed:      both succeed;
//   B first switching itself to relaxed (cudaThreadExchangeStreamCaptureMode):
//                 both succeed, even against a global capture.
// Skips, with the runtime's reason, where cudaGetDeviceCount finds no device.
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "cuda/capture_oracle.h"
#include "cuda/fill_kernel.h"
#include "cuda/graph_capture.h"

namespace racelab::cuda {
namespace {

struct Result {
  cudaError_t other = cudaSuccess;  // B's call
  cudaError_t end = cudaSuccess;    // A's cudaStreamEndCapture
};

// A captures in `mode`; B, on its own thread, calls `alloc` while the capture is open.
Result race(cudaStreamCaptureMode mode, bool pinned, bool other_relaxed = false) {
  Result r;
  cudaFree(nullptr);
  cudaStream_t s = nullptr;
  EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  float* buf = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&buf), 1024 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaStreamBeginCapture(s, mode), cudaSuccess);
  EXPECT_EQ(launch_fill(s, buf, 1024, 1.0f), cudaSuccess);
  void* p = nullptr;
  std::thread b([&] {
    cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
    if (other_relaxed) cudaThreadExchangeStreamCaptureMode(&m);
    r.other = pinned ? cudaHostAlloc(&p, 4096, cudaHostAllocDefault) : cudaMalloc(&p, 4096);
    cudaGetLastError();
    if (other_relaxed) cudaThreadExchangeStreamCaptureMode(&m);
  });
  b.join();
  cudaGraph_t g = nullptr;
  r.end = cudaStreamEndCapture(s, &g);
  cudaGetLastError();
  if (g) cudaGraphDestroy(g);
  if (p) pinned ? cudaFreeHost(p) : cudaFree(p);
  cudaFree(buf);
  cudaStreamDestroy(s);
  cudaGetLastError();
  return r;
}

class CudaRule : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_device_reason().empty()) GTEST_SKIP() << no_device_reason();
  }
};

TEST_F(CudaRule, GlobalCaptureRefusesAnotherThreadsMallocAndIsInvalidated) {
  const Result r = race(cudaStreamCaptureModeGlobal, false);
  EXPECT_EQ(r.other, cudaErrorStreamCaptureUnsupported) << code_name(r.other);
  EXPECT_EQ(r.end, cudaErrorStreamCaptureInvalidated) << code_name(r.end);
}

TEST_F(CudaRule, GlobalCaptureRefusesAnotherThreadsPinnedAllocation) {
  const Result r = race(cudaStreamCaptureModeGlobal, true);
  EXPECT_EQ(r.other, cudaErrorStreamCaptureUnsupported) << code_name(r.other);
  EXPECT_EQ(r.end, cudaErrorStreamCaptureInvalidated) << code_name(r.end);
}

TEST_F(CudaRule, ThreadLocalCaptureIgnoresOtherThreads) {
  const Result r = race(cudaStreamCaptureModeThreadLocal, false);
  EXPECT_EQ(r.other, cudaSuccess) << code_name(r.other);
  EXPECT_EQ(r.end, cudaSuccess) << code_name(r.end);
}

TEST_F(CudaRule, RelaxedCaptureRefusesNothing) {
  const Result r = race(cudaStreamCaptureModeRelaxed, false);
  EXPECT_EQ(r.other, cudaSuccess) << code_name(r.other);
  EXPECT_EQ(r.end, cudaSuccess) << code_name(r.end);
}

TEST_F(CudaRule, AThreadThatExchangedItsModeToRelaxedMayAllocate) {
  const Result r = race(cudaStreamCaptureModeGlobal, false, /*other_relaxed=*/true);
  EXPECT_EQ(r.other, cudaSuccess) << code_name(r.other);
  EXPECT_EQ(r.end, cudaSuccess) << code_name(r.end);
}

}  // namespace
}  // namespace racelab::cuda
