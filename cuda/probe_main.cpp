// cuda/probe_main.cpp -- racelab-cuda-probe: is there a CUDA device here?
//
// Exit 0 and the device's name when cudaGetDeviceCount finds one; exit 77 (CTest's
// and automake's "skipped") and the reason when it finds none. The `gpu` tests
// and ci/gpu-check ask it before running anything that needs a device.
#include <cstdio>

#include <cuda_runtime_api.h>

#include "cuda/graph_capture.h"

int main() {
  const std::string& reason = racelab::cuda::no_device_reason();
  if (!reason.empty()) {
    std::printf("%s\n", reason.c_str());
    return 77;
  }
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("no CUDA device: cudaGetDeviceProperties(0) failed\n");
    return 77;
  }
  std::printf("CUDA device 0: %s (sm_%d%d), runtime %d, driver %d\n", prop.name, prop.major, prop.minor, runtime,
              driver);
  return 0;
}
