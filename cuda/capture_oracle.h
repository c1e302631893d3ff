// cuda/capture_oracle.h -- what one trial of the real graph-capture race saw, and
// the outcome class it maps to.
//
// The race (docs/ARCHITECTURE.md, "The CUDA graph-capture race"): while a thread
// holds a capture begun in cudaStreamCaptureModeGlobal, a "potentially unsafe"
// call from any other thread -- cudaMalloc, cudaHostAlloc -- fails with
// cudaErrorStreamCaptureUnsupported and invalidates that capture, and the
// capturing thread sees only cudaErrorStreamCaptureInvalidated when it ends it.
//
// The trial body (graph_capture.h) records every CUDA call that matters, with
// the error code the real runtime returned, and this oracle turns the record into
// a racelab::Observation. It reads codes only: it never re-derives what CUDA
// "should" have said, so a driver that behaves otherwise shows up as a different
// outcome, not as a pass. The same classes as the CPU model of the race
// (compile/cuda_capture*), so the two can be compared outcome for outcome:
//
//   an unsafe call refused (cudaErrorStreamCaptureUnsupported)   error
//   a capture ended invalidated (cudaErrorStreamCaptureInvalidated) error
//   any other failing CUDA call, or the isolate_process child
//   failing to start or to report                                 error
//   a replayed graph left the wrong values                        wrong_result
//   relaxed mode (disable_check): an unsafe call ran while
//   another thread's capture was open, and nothing said so        silent_fallback
//   none of these                                                 holds
//
// Needs only the CUDA runtime's headers and cudaGetErrorName (no device), so the
// mapping is tested on machines without a GPU.
#ifndef RACELAB_CUDA_CAPTURE_ORACLE_H_
#define RACELAB_CUDA_CAPTURE_ORACLE_H_

#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "racelab/workload.h"

namespace racelab::cuda {

// Who made a call: the capturing thread, the loader (pins and allocates) or a worker.
enum class Role { kCapture, kLoader, kWorker };
const char* role_name(Role r);

// One CUDA call the oracle judges, as the runtime answered it.
struct Call {
  Role role = Role::kWorker;
  int thread = 0;                // the trial's thread index (0: the capturing thread)
  std::string api;               // "cudaMalloc", "cudaStreamEndCapture", ...
  cudaError_t code = cudaSuccess;
  // Unsafe calls only: another thread's capture was open when it ran (the body's
  // own bookkeeping, cuda/graph_capture.cpp, not CUDA's word).
  bool during_foreign_capture = false;
};

struct TrialLog {
  std::vector<Call> calls;
  int captures_replayed = 0;          // graphs instantiated, launched and checked
  std::vector<std::string> replay_mismatches;  // what a replayed graph got wrong
  std::vector<std::string> problems;  // not a CUDA code: the isolate_process child failed
  bool relaxed = false;               // captures began in cudaStreamCaptureModeRelaxed
};

// "cudaErrorStreamCaptureUnsupported", or "cudaError 12345" for a code the runtime does not name.
std::string code_name(cudaError_t code);

// The observation the engine classifies (racelab/workload.h). Each refused or
// failing call is one error naming the thread, the call and the code; metrics
// count them by kind ("unsupported", "invalidated", "unsafe_in_capture", ...).
racelab::Observation observe(const TrialLog& log);

}  // namespace racelab::cuda

#endif  // RACELAB_CUDA_CAPTURE_ORACLE_H_
