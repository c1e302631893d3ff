// compile/cuda_graph_workload.h -- the CUDA graph-capture race as a trial
// body, on the CPU model of the CUDA runtime (compile/cuda_capture.h). The
// harness glue (scenarios/register/cuda_workloads.cpp) registers it as the
// workload cuda_graph_capture; LibTorch-free.
//
// The threads (TrialInput.threads, at least 2):
//   1  the capturer   allocates its static input, begins a capture in the
//                     mitigation's mode, launches `kernels` kernels, each
//                     writing a scratch block it allocates through the caching
//                     allocator, ends the capture, instantiates the graph,
//                     replays it on fresh input and checks the result
//                     (torch.cuda.graph / make_graphed_callables /
//                     mode="reduce-overhead")
//   2  the loader     a DataLoader's pin-memory thread: `iterations` batches in
//                     flight, each a pinned host block (a miss calls
//                     cudaHostAlloc) copied into a device block (a miss calls
//                     cudaMalloc) on its own stream
//   3+ workers        `iterations` device blocks each (activations kept for
//                     backward), written and read back on their own streams
//
// The mitigations, in racelab's names (compile/mitigation/):
//   none             capture in cudaStreamCaptureModeGlobal, PyTorch's default:
//                    the loader's or a worker's miss during the capture gets
//                    cudaErrorStreamCaptureUnsupported, the capturer
//                    cudaErrorStreamCaptureInvalidated (error)
//   global_lock      one lock held for the whole capture and around every
//                    other thread's allocation: capture serialised against
//                    allocation
//   isolate_thread   cudaStreamCaptureModeThreadLocal, what Inductor uses:
//                    other threads' calls do not conflict
//   precompile       every block the loader and workers will ask for warmed in
//                    the caching allocators before the threads start, so no
//                    miss reaches the runtime during the trial (the capture's
//                    own allocations come from its private pool anyway)
//   isolate_process  the capture in a CUDA context of its own, as a process
//                    per capture has: other processes' calls cannot conflict
//   disable_check    cudaStreamCaptureModeRelaxed: no error; every call that
//                    global mode would have refused goes through unchecked and
//                    is counted (silent_fallback; cuda_capture.h says why)
//
// The oracles: each thread's errors (named with the CUDA API and the error's
// enum name), the replay's result against the host's arithmetic and every
// thread's data read back (wrong_result), a capture left open or a mode
// exchange not undone (stuck_state), the hidden conflicts (silent_fallback).
#ifndef RACELAB_COMPILE_CUDA_GRAPH_WORKLOAD_H_
#define RACELAB_COMPILE_CUDA_GRAPH_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compile/micro_workloads.h"

namespace racelab::compile::cuda {

inline constexpr const char* kCudaGraphWorkload = "cuda_graph_capture";

struct CudaGraphConfig {
  std::string mitigation = "none";
  int threads = 2;       // the capturer, the loader, then workers
  int iterations = 2;    // batches in flight (loader), blocks held (each worker)
  int kernels = 2;       // kernels in the captured region
  int64_t words = 4;     // 64-bit words per block
  // The capturer stages its input through a pinned block inside the captured
  // region (a pin_memory() there), from the same pinned cache as the loader,
  // and lets it go at the end of the region. Off by default: it adds a second
  // bug, the capture's OWN unsafe call and a graph that reads memory it does
  // not own, which no capture mode fixes. With it, global and thread_local
  // mode refuse the capturer's own cudaHostAlloc on a miss (error); relaxed
  // mode lets it run once, outside the graph, and the graph's copy then reads
  // whatever the loader later puts into the recycled block (wrong_result):
  // the graph captured an allocation it must not.
  bool capture_pins = false;
};

std::string cuda_graph_description();
// The mitigations it models, in racelab's display order.
std::vector<std::string> cuda_graph_mitigations();
// Runs one trial on the process's CUDA runtime model. Throws
// std::invalid_argument for a mitigation it does not model or threads < 2.
// Call reset_cuda_for_trial() before it.
MicroResult run_cuda_graph_capture(const CudaGraphConfig& config);
// The process's runtime back to its initial state (between trials).
void reset_cuda_for_trial();

}  // namespace racelab::compile::cuda

#endif  // RACELAB_COMPILE_CUDA_GRAPH_WORKLOAD_H_
