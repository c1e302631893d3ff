// The CUDA graph-capture model (compile/cuda_capture.h, cuda_caching_allocator.h):
// the capture-mode rules for every potentially unsafe call, invalidation and
// the error each side sees, the per-thread mode exchange, the caching
// allocators' hits and misses, and the private pool that keeps a capture's own
// allocations out of the conflict. Uncontrolled: "another thread" is a plain
// std::thread, joined before the capturing thread goes on.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "compile/cuda_caching_allocator.h"
#include "compile/cuda_capture.h"

namespace racelab::compile::cuda {
namespace {

// Runs `f` on a thread of its own and waits for it.
template <class F>
void on_another_thread(F f) {
  std::thread t(f);
  t.join();
}

// The potentially unsafe calls, each as the runtime is asked for it.
struct UnsafeCall {
  const char* api;
  std::function<Error(Runtime&)> call;
};

std::vector<UnsafeCall> unsafe_calls(Ptr a, Ptr b) {
  return {
      {"cudaMalloc", [](Runtime& rt) { Ptr p = 0; return rt.malloc(&p, 4); }},
      {"cudaHostAlloc", [](Runtime& rt) { Ptr p = 0; return rt.host_alloc(&p, 4); }},
      {"cudaMemcpy", [a, b](Runtime& rt) { return rt.memcpy(/*dst=*/b, /*src=*/a); }},
      {"cudaDeviceSynchronize", [](Runtime& rt) { return rt.device_synchronize(); }},
  };
}

Kernel add_one(Ptr src, Ptr dst) {
  return Kernel{"add_one", [src, dst](Memory& m) {
                  auto v = m.at(src);
                  for (auto& x : v) x += 1;
                  m.at(dst) = v;
                }};
}

class CudaCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(rt.malloc(&a, 4), Error::kSuccess);
    ASSERT_EQ(rt.malloc(&b, 4), Error::kSuccess);
    s = rt.create_stream();
  }
  Runtime rt;
  Ptr a = 0, b = 0;
  Stream s = 0;
};

TEST(CudaNames, ErrorsAndModesCarryTheRealRuntimesNamesValuesAndTexts) {
  EXPECT_EQ(static_cast<int>(Error::kStreamCaptureUnsupported), 900);
  EXPECT_EQ(static_cast<int>(Error::kStreamCaptureInvalidated), 901);
  EXPECT_EQ(static_cast<int>(Error::kStreamCaptureWrongThread), 908);
  EXPECT_STREQ(error_name(Error::kStreamCaptureUnsupported), "cudaErrorStreamCaptureUnsupported");
  EXPECT_STREQ(error_name(Error::kStreamCaptureInvalidated), "cudaErrorStreamCaptureInvalidated");
  EXPECT_STREQ(error_string(Error::kStreamCaptureUnsupported), "operation not permitted when stream is capturing");
  EXPECT_STREQ(error_string(Error::kStreamCaptureInvalidated),
               "operation failed due to a previous error during capture");
  EXPECT_EQ(describe("cudaMalloc", Error::kStreamCaptureUnsupported),
            "cudaMalloc: cudaErrorStreamCaptureUnsupported (operation not permitted when stream is capturing)");
  EXPECT_EQ(static_cast<int>(CaptureMode::kThreadLocal), 1);
  EXPECT_STREQ(mode_enum_name(CaptureMode::kRelaxed), "cudaStreamCaptureModeRelaxed");
  for (CaptureMode m : {CaptureMode::kGlobal, CaptureMode::kThreadLocal, CaptureMode::kRelaxed})
    EXPECT_EQ(parse_capture_mode(mode_name(m)), m);
  EXPECT_THROW(parse_capture_mode("local"), std::invalid_argument);
}

TEST_F(CudaCapture, ExchangeModeSwapsThisThreadsModeOnly) {
  EXPECT_EQ(rt.thread_capture_mode(), CaptureMode::kGlobal);
  CaptureMode m = CaptureMode::kRelaxed;
  ASSERT_EQ(rt.thread_exchange_capture_mode(&m), Error::kSuccess);
  EXPECT_EQ(m, CaptureMode::kGlobal);  // the previous mode comes back
  EXPECT_EQ(rt.thread_capture_mode(), CaptureMode::kRelaxed);
  on_another_thread([&] { EXPECT_EQ(rt.thread_capture_mode(), CaptureMode::kGlobal); });
  EXPECT_NE(rt.snapshot().diff(RuntimeSnapshot{}), "");  // an exchange not undone is stuck state
  m = CaptureMode::kGlobal;
  rt.thread_exchange_capture_mode(&m);
  EXPECT_EQ(m, CaptureMode::kRelaxed);
  EXPECT_EQ(rt.snapshot().diff(RuntimeSnapshot{}), "");
  {
    CaptureModeGuard g(rt, CaptureMode::kThreadLocal);
    EXPECT_EQ(rt.thread_capture_mode(), CaptureMode::kThreadLocal);
  }
  EXPECT_EQ(rt.thread_capture_mode(), CaptureMode::kGlobal);
}

TEST_F(CudaCapture, WithoutACaptureEveryUnsafeCallSucceeds) {
  for (const auto& u : unsafe_calls(a, b)) EXPECT_EQ(u.call(rt), Error::kSuccess) << u.api;
  EXPECT_EQ(rt.counters().prohibited, 0);
}

TEST_F(CudaCapture, GlobalCaptureRefusesAnotherThreadsUnsafeCallsAndTheCapturerSeesInvalidated) {
  for (const auto& u : unsafe_calls(a, b)) {
    ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
    ASSERT_EQ(rt.launch(s, add_one(a, b)), Error::kSuccess);
    Error other = Error::kSuccess;
    on_another_thread([&] { other = u.call(rt); });
    EXPECT_EQ(other, Error::kStreamCaptureUnsupported) << u.api;
    EXPECT_EQ(rt.stream_capture_status(s), CaptureStatus::kInvalidated) << u.api;
    // The capturing thread hears of it only through its own stream.
    EXPECT_EQ(rt.launch(s, add_one(a, b)), Error::kStreamCaptureInvalidated) << u.api;
    Graph g;
    EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kStreamCaptureInvalidated) << u.api;
    EXPECT_FALSE(g.valid()) << u.api;
    EXPECT_EQ(rt.stream_capture_status(s), CaptureStatus::kNone) << u.api;  // the sequence ended anyway
    ASSERT_FALSE(rt.invalidation_causes().empty());
    EXPECT_NE(rt.invalidation_causes().back().find(u.api), std::string::npos) << rt.invalidation_causes().back();
  }
  EXPECT_EQ(rt.counters().invalidations, 4);
  EXPECT_EQ(rt.counters().hidden_conflicts, 0);
}

TEST_F(CudaCapture, AProhibitedCallDoesNothing) {
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  const int64_t before = rt.counters().device_mallocs;
  Ptr p = 123;
  on_another_thread([&] { EXPECT_EQ(rt.malloc(&p, 4), Error::kStreamCaptureUnsupported); });
  EXPECT_EQ(p, 0u);
  EXPECT_EQ(rt.counters().device_mallocs, before);
  Graph g;
  rt.stream_end_capture(s, &g);
}

TEST_F(CudaCapture, GlobalAndThreadLocalCapturesRefuseTheirOwnThreadsUnsafeCalls) {
  for (CaptureMode mode : {CaptureMode::kGlobal, CaptureMode::kThreadLocal}) {
    ASSERT_EQ(rt.stream_begin_capture(s, mode), Error::kSuccess);
    Ptr p = 0;
    EXPECT_EQ(rt.malloc(&p, 4), Error::kStreamCaptureUnsupported) << mode_name(mode);
    Graph g;
    EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kStreamCaptureInvalidated) << mode_name(mode);
  }
}

TEST_F(CudaCapture, ThreadLocalCaptureIgnoresOtherThreadsAndReplaysCorrectly) {
  rt.write(a, {1, 2, 3, 4});
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kThreadLocal), Error::kSuccess);
  ASSERT_EQ(rt.launch(s, add_one(a, b)), Error::kSuccess);
  for (const auto& u : unsafe_calls(a, b)) {
    Error other = Error::kStreamCaptureUnsupported;
    on_another_thread([&] { other = u.call(rt); });
    EXPECT_EQ(other, Error::kSuccess) << u.api;
  }
  EXPECT_EQ(rt.read(b), (std::vector<int64_t>{1, 2, 3, 4}));  // a's copy into b ran eagerly; add_one did not
  Graph g, exec;
  ASSERT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
  ASSERT_EQ(rt.graph_instantiate(&exec, g), Error::kSuccess);
  rt.write(a, {10, 20, 30, 40});
  ASSERT_EQ(rt.graph_launch(exec, s), Error::kSuccess);
  EXPECT_EQ(rt.read(b), (std::vector<int64_t>{11, 21, 31, 41}));  // replay reads a as it is now
  EXPECT_EQ(rt.counters().hidden_conflicts, 0);  // nothing hidden: thread_local removes the conflict
  EXPECT_EQ(rt.counters().prohibited, 0);
}

TEST_F(CudaCapture, RelaxedCaptureRefusesNothingAndCountsWhatGlobalWouldHaveRefused) {
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kRelaxed), Error::kSuccess);
  for (const auto& u : unsafe_calls(a, b)) {
    Error other = Error::kStreamCaptureUnsupported;
    on_another_thread([&] { other = u.call(rt); });
    EXPECT_EQ(other, Error::kSuccess) << u.api;
  }
  Ptr own = 0;
  EXPECT_EQ(rt.malloc(&own, 4), Error::kSuccess);  // the capturer's own call runs now, outside the graph
  EXPECT_NE(own, 0u);
  Graph g;
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
  EXPECT_TRUE(g.valid());
  EXPECT_EQ(rt.counters().hidden_conflicts, 5);
  EXPECT_EQ(rt.counters().prohibited, 0);
}

TEST_F(CudaCapture, ARelaxedThreadIsNeverRefusedNorCounted) {
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  on_another_thread([&] {
    CaptureModeGuard relaxed(rt, CaptureMode::kRelaxed);
    Ptr p = 0;
    EXPECT_EQ(rt.malloc(&p, 4), Error::kSuccess);
  });
  {
    CaptureModeGuard relaxed(rt, CaptureMode::kRelaxed);  // the capturer's own thread too
    Ptr p = 0;
    EXPECT_EQ(rt.malloc(&p, 4), Error::kSuccess);
  }
  EXPECT_EQ(rt.stream_capture_status(s), CaptureStatus::kActive);
  EXPECT_EQ(rt.counters().hidden_conflicts, 0);
  Graph g;
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
}

TEST_F(CudaCapture, AThreadLocalThreadIgnoresAnotherThreadsGlobalCapture) {
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  on_another_thread([&] {
    CaptureModeGuard local(rt, CaptureMode::kThreadLocal);
    Ptr p = 0;
    EXPECT_EQ(rt.host_alloc(&p, 4), Error::kSuccess);
  });
  Graph g;
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
}

TEST_F(CudaCapture, CaptureRecordsWorkInsteadOfRunningIt) {
  rt.write(a, {5, 5, 5, 5});
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  EXPECT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kInvalidValue);  // already capturing
  ASSERT_EQ(rt.launch(s, add_one(a, b)), Error::kSuccess);
  ASSERT_EQ(rt.memcpy_async(a, b, s), Error::kSuccess);
  EXPECT_EQ(rt.read(b), (std::vector<int64_t>{0, 0, 0, 0}));
  Graph g, exec;
  ASSERT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
  EXPECT_EQ(g.nodes.size(), 2u);
  ASSERT_EQ(rt.graph_instantiate(&exec, g), Error::kSuccess);
  ASSERT_EQ(rt.graph_launch(exec, s), Error::kSuccess);
  ASSERT_EQ(rt.graph_launch(exec, s), Error::kSuccess);
  EXPECT_EQ(rt.read(a), (std::vector<int64_t>{7, 7, 7, 7}));  // two replays, each adds one
  Graph none, none_exec;
  EXPECT_EQ(rt.graph_instantiate(&none_exec, none), Error::kInvalidValue);
  EXPECT_EQ(rt.stream_begin_capture(kLegacyStream, CaptureMode::kGlobal), Error::kInvalidValue);
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kIllegalState);
}

TEST_F(CudaCapture, OnlyTheCapturingThreadMayEndANonRelaxedCapture) {
  for (CaptureMode mode : {CaptureMode::kGlobal, CaptureMode::kThreadLocal, CaptureMode::kRelaxed}) {
    ASSERT_EQ(rt.stream_begin_capture(s, mode), Error::kSuccess);
    Error other = Error::kSuccess;
    Graph g;
    on_another_thread([&] { other = rt.stream_end_capture(s, &g); });
    if (mode == CaptureMode::kRelaxed) {
      EXPECT_EQ(other, Error::kSuccess);
    } else {
      EXPECT_EQ(other, Error::kStreamCaptureWrongThread) << mode_name(mode);
      EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess) << mode_name(mode);
    }
  }
}

TEST_F(CudaCapture, AnOpenCaptureIsStuckStateAndResetClearsIt) {
  const RuntimeSnapshot initial = rt.snapshot();
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  const std::string d = rt.snapshot().diff(initial);
  EXPECT_NE(d.find("still open"), std::string::npos) << d;
  rt.reset();
  EXPECT_EQ(rt.snapshot().diff(initial), "");
  EXPECT_EQ(rt.counters().captures, 0);
}

TEST_F(CudaCapture, APrivateRuntimeIsAnotherProcess) {
  Runtime own;
  const Stream mine = own.create_stream();
  ASSERT_EQ(own.stream_begin_capture(mine, CaptureMode::kGlobal), Error::kSuccess);
  on_another_thread([&] {
    Ptr p = 0;
    EXPECT_EQ(current_runtime().malloc(&p, 4), Error::kSuccess);  // the process's context
  });
  {
    ScopedCudaRuntime in(own);
    EXPECT_EQ(&current_runtime(), &own);
  }
  EXPECT_EQ(&current_runtime(), &Runtime::process());
  Graph g;
  EXPECT_EQ(own.stream_end_capture(mine, &g), Error::kSuccess);
}

// ---- the caching allocators ----------------------------------------------------

TEST(CudaCachingAllocator, OnlyAMissCallsCudaMalloc) {
  Runtime rt;
  CachingAllocator cache(rt);
  Ptr p = 0, q = 0, r = 0;
  ASSERT_EQ(cache.malloc(&p, 8, kLegacyStream), Error::kSuccess);
  EXPECT_EQ(rt.counters().device_mallocs, 1);
  cache.free(p);
  ASSERT_EQ(cache.malloc(&q, 8, kLegacyStream), Error::kSuccess);
  EXPECT_EQ(q, p);  // the same block again
  EXPECT_EQ(rt.counters().device_mallocs, 1);
  ASSERT_EQ(cache.malloc(&r, 16, kLegacyStream), Error::kSuccess);  // another size: a miss
  EXPECT_EQ(rt.counters().device_mallocs, 2);
  const CacheStats st = cache.stats();
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.misses, 2);
}

TEST(CudaCachingAllocator, AColdMissDuringAnotherThreadsGlobalCaptureFailsAndInvalidatesIt) {
  Runtime rt;
  CachingAllocator cache(rt);
  const Stream s = rt.create_stream();
  const Stream mine = rt.create_stream();
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  Ptr p = 0;
  on_another_thread([&] { EXPECT_EQ(cache.malloc(&p, 8, mine), Error::kStreamCaptureUnsupported); });
  EXPECT_EQ(p, 0u);
  EXPECT_EQ(cache.stats().failed_misses, 1);
  Graph g;
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kStreamCaptureInvalidated);
}

TEST(CudaCachingAllocator, AWarmCacheHidesAnotherThreadsAllocationFromTheCapture) {
  Runtime rt;
  CachingAllocator cache(rt);
  const Stream s = rt.create_stream();
  const Stream mine = rt.create_stream();
  ASSERT_EQ(cache.reserve(8, 2), Error::kSuccess);
  EXPECT_EQ(cache.cached_blocks(), 2);
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  on_another_thread([&] {
    Ptr p = 0, q = 0;
    EXPECT_EQ(cache.malloc(&p, 8, mine), Error::kSuccess);
    EXPECT_EQ(cache.malloc(&q, 8, mine), Error::kSuccess);
    cache.free(p);
    cache.free(q);
  });
  Graph g;
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
  EXPECT_EQ(rt.counters().device_mallocs, 2);  // both during reserve
}

TEST(CudaCachingAllocator, TheCapturesOwnMissesGoToItsPrivatePoolUnderARelaxedExchange) {
  Runtime rt;
  CachingAllocator cache(rt);
  const Stream s = rt.create_stream();
  const Stream other = rt.create_stream();
  ASSERT_EQ(cache.reserve(8, 1), Error::kSuccess);  // a shared block the capture must NOT take
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  Ptr p = 0;
  ASSERT_EQ(cache.malloc(&p, 8, s), Error::kSuccess);  // a miss in the private pool: allowed in global mode
  EXPECT_EQ(rt.counters().device_mallocs, 2);
  EXPECT_EQ(rt.thread_capture_mode(), CaptureMode::kGlobal);  // the exchange was undone
  EXPECT_EQ(rt.counters().hidden_conflicts, 0);
  cache.free(p);  // back to the private pool, kept for the graph
  Ptr q = 0;
  ASSERT_EQ(cache.malloc(&q, 8, s), Error::kSuccess);
  EXPECT_EQ(q, p);  // reused within the capture
  cache.free(q);
  Graph g;
  ASSERT_EQ(rt.stream_end_capture(s, &g), Error::kSuccess);
  // After the capture another stream never gets the graph's block.
  Ptr r = 0;
  ASSERT_EQ(cache.malloc(&r, 8, other), Error::kSuccess);
  EXPECT_NE(r, p);
  EXPECT_EQ(cache.stats().hits, 2);  // q, and r from the shared pool
}

TEST(CudaHostCachingAllocator, AMissCallsCudaHostAllocWhichAGlobalCaptureRefuses) {
  Runtime rt;
  HostCachingAllocator pinned(rt);
  const Stream s = rt.create_stream();
  Ptr p = 0;
  ASSERT_EQ(pinned.malloc(&p, 4), Error::kSuccess);
  pinned.free(p);
  EXPECT_EQ(rt.counters().host_allocs, 1);
  ASSERT_EQ(rt.stream_begin_capture(s, CaptureMode::kGlobal), Error::kSuccess);
  on_another_thread([&] {
    Ptr hit = 0, miss = 0;
    EXPECT_EQ(pinned.malloc(&hit, 4), Error::kSuccess);  // cached: nothing reaches the runtime
    EXPECT_EQ(hit, p);
    EXPECT_EQ(pinned.malloc(&miss, 4), Error::kStreamCaptureUnsupported);  // the pin-memory thread's failure
  });
  Graph g;
  EXPECT_EQ(rt.stream_end_capture(s, &g), Error::kStreamCaptureInvalidated);
  EXPECT_EQ(pinned.stats().hits, 1);
  EXPECT_EQ(pinned.stats().misses, 2);
  EXPECT_EQ(pinned.stats().failed_misses, 1);
}

}  // namespace
}  // namespace racelab::compile::cuda
