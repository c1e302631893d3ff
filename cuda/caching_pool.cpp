// cuda/caching_pool.cpp -- the caching allocator over the real runtime (caching_pool.h).
#include "cuda/caching_pool.h"

namespace racelab::cuda {

cudaError_t CachingPool::allocate(Kind kind, size_t bytes, void** out, bool* missed, cudaStream_t capturing) {
  *out = nullptr;
  *missed = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = free_.find(Key{kind, bytes});
    if (it != free_.end() && !it->second.empty()) {
      *out = it->second.back();
      it->second.pop_back();
      return cudaSuccess;
    }
    ++misses_;
  }
  *missed = true;
  // The runtime call runs outside the pool's lock, as in c10: the lock guards the
  // cache, not CUDA, so another thread's miss is not serialised against this one.
  cudaError_t rc;
  if (kind == Kind::kDevice) {
    if (capturing != nullptr) {
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      cudaThreadExchangeStreamCaptureMode(&mode);
      rc = cudaMalloc(out, bytes);
      cudaThreadExchangeStreamCaptureMode(&mode);  // back to what the thread had
    } else {
      rc = cudaMalloc(out, bytes);
    }
  } else {
    rc = cudaHostAlloc(out, bytes, cudaHostAllocDefault);
  }
  if (rc != cudaSuccess) {
    *out = nullptr;
    cudaGetLastError();  // the code is returned; do not leave it for the next call to find
    return rc;
  }
  std::lock_guard<std::mutex> lk(mu_);
  owned_.emplace_back(kind, *out);
  return rc;
}

void CachingPool::recycle(Kind kind, size_t bytes, void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lk(mu_);
  free_[Key{kind, bytes}].push_back(p);
}

cudaError_t CachingPool::warm(Kind kind, size_t bytes, int count) {
  std::vector<void*> got;
  for (int i = 0; i < count; ++i) {
    void* p = nullptr;
    bool missed = false;
    cudaError_t rc = allocate(kind, bytes, &p, &missed);
    if (rc != cudaSuccess) return rc;
    got.push_back(p);
  }
  for (void* p : got) recycle(kind, bytes, p);
  return cudaSuccess;
}

void CachingPool::release() {
  std::lock_guard<std::mutex> lk(mu_);
  for (auto& [kind, p] : owned_) {
    if (kind == Kind::kDevice) cudaFree(p);
    else cudaFreeHost(p);
  }
  owned_.clear();
  free_.clear();
  cudaGetLastError();
}

int CachingPool::misses() const {
  std::lock_guard<std::mutex> lk(mu_);
  return misses_;
}

}  // namespace racelab::cuda
