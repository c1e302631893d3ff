// cuda/torch/graph_compat.h -- the one place where LibTorch versions differ for the
// at::cuda::CUDAGraph form of the capture race (compile/torch_compat.h is the
// CPU side's). Built only against a LibTorch 2.x with CUDA (cuda/CMakeLists.txt):
//
//   * capture_begin(pool, mode): the capture mode is an argument since 2.0; 1.13's
//     capture_begin(pool) always captured in global mode, so a 1.x LibTorch with
//     CUDA is not offered this form at all.
//   * The device caching allocator's emptyCache(): a cold cache per trial, so the
//     allocating threads' tensors are misses that call cudaMalloc.
#ifndef RACELAB_CUDA_TORCH_GRAPH_COMPAT_H_
#define RACELAB_CUDA_TORCH_GRAPH_COMPAT_H_

#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/csrc/api/include/torch/version.h>

#if TORCH_VERSION_MAJOR < 2
#error "the CUDAGraph form of the capture race needs LibTorch 2.x (capture_begin takes a capture mode)"
#endif

namespace racelab::cuda::torch_form {

inline void capture_begin(at::cuda::CUDAGraph& graph, cudaStreamCaptureMode mode) {
  graph.capture_begin({0, 0}, mode);
}

inline void empty_device_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }

}  // namespace racelab::cuda::torch_form

#endif  // RACELAB_CUDA_TORCH_GRAPH_COMPAT_H_
