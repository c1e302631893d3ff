// cuda/torch/graph_capture.h -- the third form of the CUDA graph-capture race:
// through LibTorch's own at::cuda::CUDAGraph and caching allocators, as
// torch.cuda.graph does it. The workload `cuda_graph_capture_torch`; built only
// against a LibTorch 2.x with CUDA (cuda/CMakeLists.txt), never on Debian's CPU
// LibTorch.
//
// The threads and knobs are the real form's (cuda/graph_capture.h):
//   thread 0   on a side stream: at::cuda::CUDAGraph::capture_begin in the
//              mitigation's mode, `kernels` ops each making a new CUDA tensor
//              (from the graph's private pool), capture_end, replay, check;
//   thread 1   the loader: a pinned host tensor (CachingHostAllocator) and a CUDA
//              tensor (CUDACachingAllocator) per iteration;
//   threads 2+ workers: a CUDA tensor per iteration.
// The device cache is emptied before each trial (a cold cache: every worker
// tensor is a cudaMalloc), except under precompile, which warms it.
// LibTorch reports a refused call as a c10::Error whose message carries the
// runtime's error string; the oracle (cuda/capture_oracle.h) gets the code back
// from that string. Mitigations: the real form's except isolate_process.
#ifndef RACELAB_CUDA_TORCH_GRAPH_CAPTURE_H_
#define RACELAB_CUDA_TORCH_GRAPH_CAPTURE_H_

#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "racelab/workload.h"

namespace racelab::cuda::torch_form {

inline constexpr const char* kWorkloadName = "cuda_graph_capture_torch";

const std::vector<std::string>& mitigations();
// The runtime code whose error string `what` (a c10::Error's message) carries;
// cudaErrorUnknown when it names none of the capture codes or cudaErrorMemoryAllocation.
cudaError_t code_in_message(const std::string& what);

racelab::Observation run_trial(const racelab::TrialInput& in);

}  // namespace racelab::cuda::torch_form

#endif  // RACELAB_CUDA_TORCH_GRAPH_CAPTURE_H_
