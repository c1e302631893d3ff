// cuda/caching_pool.h -- a caching allocator in PyTorch's manner, over the real
// CUDA runtime: device blocks (cudaMalloc) and pinned host blocks (cudaHostAlloc),
// kept for reuse and handed out again without a CUDA call.
//
// Only a miss calls the runtime, and that call is what races with a capture in
// another thread. So a pool warmed before the threads start (the `precompile`
// mitigation, like warming PyTorch's caching allocator or giving the capture a
// private pool) makes the racing section allocate nothing from CUDA.
//
// On a miss, a thread whose own stream is capturing switches itself to
// cudaStreamCaptureModeRelaxed around the cudaMalloc with
// cudaThreadExchangeStreamCaptureMode -- as c10's CUDACachingAllocator does
// (cudaMallocMaybeCapturing) -- so the capturing thread's own allocation is
// allowed. Every other thread calls cudaMalloc as it is: that is the bug.
//
// Thread-safe (one std::mutex: the pool's own lock, not an interleaving point).
// Freed only by release(), after the trial's threads joined.
#ifndef RACELAB_CUDA_CACHING_POOL_H_
#define RACELAB_CUDA_CACHING_POOL_H_

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

namespace racelab::cuda {

class CachingPool {
 public:
  enum class Kind { kDevice, kPinned };

  CachingPool() = default;
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;
  ~CachingPool() { release(); }

  // A block of `bytes`: from the cache, or from the runtime on a miss. *missed
  // says whether the runtime was called; the returned code is the runtime's
  // (cudaSuccess on a hit). `capturing` names the caller's stream when it is
  // the one being captured (the relaxed exchange above), else nullptr.
  cudaError_t allocate(Kind kind, size_t bytes, void** out, bool* missed, cudaStream_t capturing = nullptr);
  // Back to the cache (no CUDA call).
  void recycle(Kind kind, size_t bytes, void* p);
  // Warms the cache with `count` blocks of `bytes` (outside any capture).
  cudaError_t warm(Kind kind, size_t bytes, int count);
  // Frees every block the pool ever got from the runtime. Call with no capture open.
  void release();

  int misses() const;

 private:
  struct Key {
    Kind kind;
    size_t bytes;
    bool operator<(const Key& o) const { return kind != o.kind ? kind < o.kind : bytes < o.bytes; }
  };
  mutable std::mutex mu_;
  std::map<Key, std::vector<void*>> free_;
  std::vector<std::pair<Kind, void*>> owned_;
  int misses_ = 0;
};

}  // namespace racelab::cuda

#endif  // RACELAB_CUDA_CACHING_POOL_H_
