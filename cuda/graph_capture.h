// cuda/graph_capture.h -- the CUDA graph-capture race on the real CUDA runtime:
// the workload `cuda_graph_capture_cuda` (scenarios/cuda/).
//
// One trial, on device 0:
//   thread 0, the capturing thread: on its own non-blocking stream,
//     cudaStreamBeginCapture in the mitigation's mode, then `kernels` times a
//     scratch block from the caching pool and a kernel that fills it, then
//     cudaStreamEndCapture; a graph that ended well is instantiated, launched
//     and every block's values checked (torch.cuda.graph's shape).
//   thread 1, the loader (a DataLoader's pin-memory thread): `iterations` times
//     a pinned block (cudaHostAlloc) and a device block (cudaMalloc), through the pool.
//   threads 2.., workers: `iterations` device blocks each, through the pool.
// The threads and knobs are the CPU model's (compile/cuda_graph_workload.h), so a
// cell of one compares with the same cell of the other.
// Interleaving points sit between the CUDA calls (cuda.capture.begin, .alloc,
// .launch, .end; cuda.loader.pin, cuda.loader.alloc; cuda.worker.alloc), each
// naming the process's capture state as its object, so a controlled strategy
// decides which allocation lands inside a capture and a schedule replays it.
//
// The mitigations, each as its real CUDA form (the CPU model's names):
//   none             capture in cudaStreamCaptureModeGlobal, the pool cold
//   global_lock      one racelab::Mutex held from BeginCapture to EndCapture and
//                    around every allocation: serialise capture against allocation
//   isolate_thread   capture in cudaStreamCaptureModeThreadLocal (what Inductor uses)
//   precompile       the pool warmed before the threads start: the racing section
//                    calls neither cudaMalloc nor cudaHostAlloc
//   isolate_process  the capture runs in a child process (racelab-cuda-capture),
//                    whose capture no call of this process can touch
//   disable_check    capture in cudaStreamCaptureModeRelaxed: nothing is refused,
//                    and the oracle counts the unsafe calls that ran inside an
//                    open capture (silent)
// The outcome is capture_oracle.h's, from the codes the runtime returned.
//
// With no device (cudaGetDeviceCount finds none), a trial does nothing and reports
// bad_input with the reason: racelab exits 3 saying why, never a race outcome.
#ifndef RACELAB_CUDA_GRAPH_CAPTURE_H_
#define RACELAB_CUDA_GRAPH_CAPTURE_H_

#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "racelab/workload.h"

namespace racelab::cuda {

inline constexpr const char* kWorkloadName = "cuda_graph_capture_cuda";

// The mitigations, in the catalogue's order.
const std::vector<std::string>& mitigations();

// What a mitigation changes in the trial.
struct Plan {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  bool lock = false;           // global_lock
  bool warm_pool = false;      // precompile
  bool child_process = false;  // isolate_process
};
// Throws std::invalid_argument for a name mitigations() does not hold.
Plan plan_for(const std::string& mitigation);
const char* mode_name(cudaStreamCaptureMode mode);

// "" when the runtime sees a device; else why not ("no CUDA device: ...").
// Asked once per process.
const std::string& no_device_reason();

nlohmann::json default_knobs();     // iterations, kernels, bytes
void check_knobs(const nlohmann::json& knobs);  // racelab::KnobError

// The trial body (racelab/workload.h).
racelab::Observation run_trial(const racelab::TrialInput& in);

}  // namespace racelab::cuda

#endif  // RACELAB_CUDA_GRAPH_CAPTURE_H_
