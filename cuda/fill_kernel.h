// cuda/fill_kernel.h -- the work the capturing thread records into its graph
// (fill_kernel.cu, compiled by nvcc): p[0..n) = value, so a replayed graph's
// effect can be checked value by value.
#ifndef RACELAB_CUDA_FILL_KERNEL_H_
#define RACELAB_CUDA_FILL_KERNEL_H_

#include <cuda_runtime_api.h>

namespace racelab::cuda {

// Launches the fill on `stream` (recorded, not run, while the stream captures);
// returns the launch's own error.
cudaError_t launch_fill(cudaStream_t stream, float* p, int n, float value);

}  // namespace racelab::cuda

#endif  // RACELAB_CUDA_FILL_KERNEL_H_
