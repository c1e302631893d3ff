// cuda/capture_loop.h -- the capturing thread's work, shared by the in-process
// trial (graph_capture.cpp) and the child process of isolate_process
// (capture_child.cpp), so the two capture exactly the same way.
#ifndef RACELAB_CUDA_CAPTURE_LOOP_H_
#define RACELAB_CUDA_CAPTURE_LOOP_H_

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda/caching_pool.h"
#include "cuda/capture_oracle.h"
#include "racelab/sync.h"

namespace racelab::cuda {

struct CaptureSpec {
  int kernels = 2;  // kernels in the captured region, each filling a scratch block of its own
  size_t bytes = 1 << 16;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
};

// Appends to a TrialLog from several threads.
class LogSink {
 public:
  explicit LogSink(TrialLog* log) : log_(log) {}
  void call(Role role, int thread, std::string api, cudaError_t code, bool during_foreign_capture = false);
  void replayed();
  void mismatch(std::string what);
  void problem(std::string what);

 private:
  std::mutex mu_;
  TrialLog* log_;
};

// One capture on a new non-blocking stream: begin, then `spec.kernels` times a
// scratch block from `pool` and the fill kernel into it, then end; a graph that
// ended well is instantiated, launched and every block checked. `lock` (may be
// null) is held from begin to end; `open` counts the captures open in this
// process (the oracle's bookkeeping).
void capture_loop(const CaptureSpec& spec, CachingPool& pool, racelab::Mutex* lock, std::atomic<int>* open,
                  LogSink& sink);

}  // namespace racelab::cuda

#endif  // RACELAB_CUDA_CAPTURE_LOOP_H_
