// scenarios/register/real_cuda_workloads.cpp -- the CUDA graph-capture race on the
// real CUDA runtime (cuda/graph_capture.h) as a racelab::Workload. Compiled only
// where CMake found the CUDA Toolkit (scenarios/CMakeLists.txt); its scenario is
// scenarios/cuda/cuda_graph_capture_cuda.json. The CPU model of the same race is
// the workload cuda_graph_capture, on every machine.
#include <nlohmann/json.hpp>

#include "cuda/graph_capture.h"
#include "racelab/workload.h"

namespace {

racelab::WorkloadRegistrar registrar{racelab::Workload{
    racelab::cuda::kWorkloadName,
    "Real CUDA: a capturing thread (cudaStreamBeginCapture in the mitigation's mode) against a loader (cudaHostAlloc, "
    "cudaMalloc) and workers (cudaMalloc) through a caching pool; the oracle reads the runtime's error codes. Needs "
    "a GPU: without one a trial exits 3 saying so",
    racelab::cuda::default_knobs(), racelab::cuda::mitigations(), false, [] {}, &racelab::cuda::run_trial,
    &racelab::cuda::check_knobs}};

}  // namespace
