// compile/cuda_caching_allocator.h -- the caching allocators in front of the
// CUDA runtime model (compile/cuda_capture.h), as far as capture is concerned:
// PyTorch's c10::cuda::CUDACachingAllocator and its pinned-memory
// CachingHostAllocator. Facts modelled, no code copied. LibTorch-free.
//
// Why they matter to the race: only a MISS reaches the runtime (cudaMalloc,
// cudaHostAlloc), and only a call that reaches the runtime can conflict with a
// capture. A warm cache makes a thread's allocations invisible to the capture
// rules; a new size, or a block another thread holds, makes them visible again.
//
//   CachingAllocator      device memory. Freed blocks go back to the pool they
//                         came from and are handed out again for the same size.
//                         While a stream captures, allocations on that stream
//                         come from the capture's PRIVATE pool (PyTorch's
//                         beginAllocateToPool), which keeps its blocks for the
//                         graph's replays; a miss there calls cudaMalloc with
//                         the thread's mode exchanged to relaxed
//                         (cudaMallocMaybeCapturing), so the capture's own
//                         allocations never conflict with it. Allocations on
//                         any other stream use the shared pool and call
//                         cudaMalloc in the thread's own mode.
//   HostCachingAllocator  pinned host memory for the loader. A miss calls
//                         cudaHostAlloc in the thread's own mode: it has no
//                         capture awareness at all.
//
// Each keeps its pools under one racelab::Mutex (a controlled lock: taking it is
// an interleaving point, kCudaCacheLock / kCudaHostCacheLock), held across the
// runtime call on a miss, as PyTorch holds its allocator mutex across cudaMalloc.
#ifndef RACELAB_COMPILE_CUDA_CACHING_ALLOCATOR_H_
#define RACELAB_COMPILE_CUDA_CACHING_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <vector>

#include "racelab/sync.h"
#include "compile/cuda_capture.h"
#include "compile/point_names.h"

namespace racelab::compile::cuda {

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;          // lookups that called the runtime
  int64_t failed_misses = 0;   // of those, refused by the runtime
};

class CachingAllocator {
 public:
  explicit CachingAllocator(Runtime& rt) : rt_(rt) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of `words` for work on `stream`. On a refused miss *out is 0 and
  // the runtime's error is returned (cudaErrorStreamCaptureUnsupported when a
  // capture forbids this thread's cudaMalloc).
  Error malloc(Ptr* out, size_t words, Stream stream);
  // Back to the pool the block came from (a private pool keeps it for its graph).
  void free(Ptr p);
  // Warm-up (the precompile mitigation): makes `count` blocks of `words` wait
  // in the shared pool, calling cudaMalloc now for those not cached yet.
  Error reserve(size_t words, int count);

  CacheStats stats() const;
  // Blocks waiting in the shared pool, all sizes.
  int64_t cached_blocks() const;

 private:
  using Pool = std::map<size_t, std::vector<Ptr>>;  // free blocks by size
  struct Owner {
    uint64_t pool = 0;  // 0: the shared pool, else the capture id of a private pool
    size_t words = 0;
  };

  Runtime& rt_;
  mutable racelab::Mutex mu_{racelab::compile::points::kCudaCacheLock};
  Pool shared_;
  std::map<uint64_t, Pool> private_;  // by capture id
  std::map<Ptr, Owner> owners_;       // every block this allocator made
  CacheStats stats_;
};

class HostCachingAllocator {
 public:
  explicit HostCachingAllocator(Runtime& rt) : rt_(rt) {}
  HostCachingAllocator(const HostCachingAllocator&) = delete;
  HostCachingAllocator& operator=(const HostCachingAllocator&) = delete;

  // A pinned block of `words`: a cached one, or cudaHostAlloc on a miss.
  Error malloc(Ptr* out, size_t words);
  void free(Ptr p);
  // Warm-up: `count` pinned blocks of `words` waiting in the cache.
  Error reserve(size_t words, int count);
  CacheStats stats() const;

 private:
  Runtime& rt_;
  mutable racelab::Mutex mu_{racelab::compile::points::kCudaHostCacheLock};
  std::map<size_t, std::vector<Ptr>> cache_;
  std::map<Ptr, size_t> sizes_;
  CacheStats stats_;
};

}  // namespace racelab::compile::cuda

#endif  // RACELAB_COMPILE_CUDA_CACHING_ALLOCATOR_H_
