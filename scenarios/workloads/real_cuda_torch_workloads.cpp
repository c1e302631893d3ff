// scenarios/workloads/real_cuda_torch_workloads.cpp -- the CUDA graph-capture race
// through LibTorch's at::cuda::CUDAGraph (cuda/torch/graph_capture.h) as a
// racelab::Workload. Compiled only against a LibTorch 2.x with CUDA
// (scenarios/CMakeLists.txt); the same knobs as cuda_graph_capture_cuda.
#include <nlohmann/json.hpp>

#include "cuda/graph_capture.h"
#include "cuda/torch/graph_capture.h"
#include "racelab/workload.h"

namespace {

racelab::WorkloadRegistrar registrar{racelab::Workload{
    cuda_real::torch_form::kWorkloadName,
    "Real CUDA through LibTorch: at::cuda::CUDAGraph::capture_begin in the mitigation's mode against a loader "
    "(pinned and CUDA tensors) and workers (CUDA tensors) on LibTorch's caching allocators. Needs a GPU",
    cuda_real::default_knobs(), cuda_real::torch_form::mitigations(), false, [] {},
    &cuda_real::torch_form::run_trial, &cuda_real::check_knobs}};

}  // namespace
