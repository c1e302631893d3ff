// compile/cuda_caching_allocator.cpp -- see cuda_caching_allocator.h.
#include "compile/cuda_caching_allocator.h"

#include <mutex>

namespace racelab::compile::cuda {

Error CachingAllocator::malloc(Ptr* out, size_t words, Stream stream) {
  std::lock_guard<racelab::Mutex> lock(mu_);
  *out = 0;
  // PyTorch asks the stream, not the thread: is it capturing, and which capture?
  const uint64_t capture = rt_.stream_capture_id(stream);
  Pool& pool = capture != 0 ? private_[capture] : shared_;
  auto& blocks = pool[words];
  if (!blocks.empty()) {
    *out = blocks.back();
    blocks.pop_back();
    ++stats_.hits;
    return Error::kSuccess;
  }
  ++stats_.misses;
  Error e;
  if (capture != 0) {
    // cudaMallocMaybeCapturing: the capture's own allocation, made with this
    // thread's mode relaxed for the call.
    CaptureModeGuard relaxed(rt_, CaptureMode::kRelaxed);
    e = rt_.malloc(out, words);
  } else {
    e = rt_.malloc(out, words);
  }
  if (e != Error::kSuccess) {
    ++stats_.failed_misses;
    return e;
  }
  owners_[*out] = Owner{capture, words};
  return Error::kSuccess;
}

void CachingAllocator::free(Ptr p) {
  std::lock_guard<racelab::Mutex> lock(mu_);
  auto it = owners_.find(p);
  if (it == owners_.end()) return;
  Pool& pool = it->second.pool != 0 ? private_[it->second.pool] : shared_;
  pool[it->second.words].push_back(p);
}

Error CachingAllocator::reserve(size_t words, int count) {
  std::vector<Ptr> taken;
  Error result = Error::kSuccess;
  for (int i = 0; i < count; ++i) {
    Ptr p = 0;
    result = malloc(&p, words, kLegacyStream);
    if (result != Error::kSuccess) break;
    taken.push_back(p);
  }
  for (Ptr p : taken) free(p);
  return result;
}

CacheStats CachingAllocator::stats() const {
  std::lock_guard<racelab::Mutex> lock(mu_);
  return stats_;
}

int64_t CachingAllocator::cached_blocks() const {
  std::lock_guard<racelab::Mutex> lock(mu_);
  int64_t n = 0;
  for (const auto& [words, blocks] : shared_) n += static_cast<int64_t>(blocks.size());
  return n;
}

Error HostCachingAllocator::malloc(Ptr* out, size_t words) {
  std::lock_guard<racelab::Mutex> lock(mu_);
  *out = 0;
  auto& blocks = cache_[words];
  if (!blocks.empty()) {
    *out = blocks.back();
    blocks.pop_back();
    ++stats_.hits;
    return Error::kSuccess;
  }
  ++stats_.misses;
  const Error e = rt_.host_alloc(out, words);
  if (e != Error::kSuccess) {
    ++stats_.failed_misses;
    return e;
  }
  sizes_[*out] = words;
  return Error::kSuccess;
}

void HostCachingAllocator::free(Ptr p) {
  std::lock_guard<racelab::Mutex> lock(mu_);
  auto it = sizes_.find(p);
  if (it != sizes_.end()) cache_[it->second].push_back(p);
}

Error HostCachingAllocator::reserve(size_t words, int count) {
  std::vector<Ptr> taken;
  Error result = Error::kSuccess;
  for (int i = 0; i < count; ++i) {
    Ptr p = 0;
    result = malloc(&p, words);
    if (result != Error::kSuccess) break;
    taken.push_back(p);
  }
  for (Ptr p : taken) free(p);
  return result;
}

CacheStats HostCachingAllocator::stats() const {
  std::lock_guard<racelab::Mutex> lock(mu_);
  return stats_;
}

}  // namespace racelab::compile::cuda
