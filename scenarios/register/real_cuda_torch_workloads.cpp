// scenarios/register/real_cuda_torch_workloads.cpp -- the CUDA graph-capture race
// through LibTorch's at::cuda::CUDAGraph (cuda/torch/graph_capture.h) as a
// racelab::Workload. Compiled only against a LibTorch 2.x with CUDA
// (scenarios/CMakeLists.txt); the same knobs as cuda_graph_capture_cuda.
#include <nlohmann/json.hpp>

#include "cuda/graph_capture.h"
#include "cuda/torch/graph_capture.h"
#include "racelab/workload.h"

namespace {

racelab::WorkloadRegistrar registrar{racelab::Workload{
    racelab::cuda::torch_form::kWorkloadName,
    "Real CUDA through LibTorch: at::cuda::CUDAGraph::capture_begin in the mitigation's mode against a loader "
    "(pinned and CUDA tensors) and workers (CUDA tensors) on LibTorch's caching allocators. Needs a GPU",
    racelab::cuda::default_knobs(), racelab::cuda::torch_form::mitigations(), false, [] {},
    &racelab::cuda::torch_form::run_trial, &racelab::cuda::check_knobs}};

}  // namespace
