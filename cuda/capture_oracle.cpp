// cuda/capture_oracle.cpp -- the real trial's calls and codes to an outcome (capture_oracle.h).
#include "cuda/capture_oracle.h"

#include <cstdint>
#include <string>

namespace racelab::cuda {

const char* role_name(Role r) {
  switch (r) {
    case Role::kCapture: return "capture";
    case Role::kLoader: return "loader";
    case Role::kWorker: return "worker";
  }
  return "?";
}

std::string code_name(cudaError_t code) {
  // cudaGetErrorName needs no device and no driver: it is a table in cudart.
  const char* n = cudaGetErrorName(code);
  if (n == nullptr || std::string(n) == "unrecognized error code")
    return "cudaError " + std::to_string(static_cast<int>(code));
  return n;
}

racelab::Observation observe(const TrialLog& log) {
  racelab::Observation obs;
  int64_t unsupported = 0, invalidated = 0, other = 0, unsafe_in_capture = 0;
  for (const Call& c : log.calls) {
    if (c.code == cudaSuccess) {
      // Relaxed mode lets the call through; the bookkeeping knows a capture was open.
      if (c.during_foreign_capture) ++unsafe_in_capture;
      continue;
    }
    if (c.code == cudaErrorStreamCaptureUnsupported) ++unsupported;
    else if (c.code == cudaErrorStreamCaptureInvalidated) ++invalidated;
    else ++other;
    obs.errors.push_back(std::string(role_name(c.role)) + " thread " + std::to_string(c.thread) + ": " + c.api +
                         ": " + code_name(c.code) + " (" + cudaGetErrorString(c.code) + ")");
  }
  for (const std::string& p : log.problems) obs.errors.push_back(p);
  if (!log.replay_mismatches.empty()) obs.wrong_result = log.replay_mismatches.front();
  // Only a call that went through unreported is silent: once CUDA refused
  // something, the trial already says so as an error.
  if (log.relaxed && obs.errors.empty()) obs.silent_fallbacks = unsafe_in_capture;
  obs.metrics["unsupported"] = unsupported;
  obs.metrics["invalidated"] = invalidated;
  obs.metrics["other_cuda_errors"] = other;
  obs.metrics["unsafe_in_capture"] = unsafe_in_capture;
  obs.metrics["captures_replayed"] = log.captures_replayed;
  return obs;
}

}  // namespace racelab::cuda
