// cuda/fill_kernel.cu -- the fill kernel the capture records (fill_kernel.h).
#include "cuda/fill_kernel.h"

namespace racelab::cuda {
namespace {

__global__ void fill(float* p, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value;
}

}  // namespace

cudaError_t launch_fill(cudaStream_t stream, float* p, int n, float value) {
  const int block = 256;
  fill<<<(n + block - 1) / block, block, 0, stream>>>(p, n, value);
  return cudaGetLastError();
}

}  // namespace racelab::cuda
