// cuda/torch/graph_capture.cpp -- the capture race through at::cuda::CUDAGraph (graph_capture.h).
#include "cuda/torch/graph_capture.h"

#include <atomic>
#include <exception>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "compile/torch_compat.h"
#include "cuda/capture_loop.h"
#include "cuda/capture_oracle.h"
#include "cuda/graph_capture.h"
#include "cuda/torch/graph_compat.h"
#include "racelab/point.h"
#include "racelab/sync.h"

namespace racelab::cuda::torch_form {

const std::vector<std::string>& mitigations() {
  static const std::vector<std::string> names = {"none", "disable_check", "global_lock", "precompile",
                                                 "isolate_thread"};
  return names;
}

cudaError_t code_in_message(const std::string& what) {
  for (cudaError_t c : {cudaErrorStreamCaptureUnsupported, cudaErrorStreamCaptureInvalidated,
                        cudaErrorStreamCaptureImplicit, cudaErrorStreamCaptureWrongThread,
                        cudaErrorStreamCaptureUnjoined, cudaErrorStreamCaptureIsolation,
                        cudaErrorStreamCaptureMerge, cudaErrorStreamCaptureUnmatched, cudaErrorMemoryAllocation})
    if (what.find(cudaGetErrorString(c)) != std::string::npos || what.find(cudaGetErrorName(c)) != std::string::npos)
      return c;
  return cudaErrorUnknown;
}

namespace {

// Runs `op`; a LibTorch error becomes a logged call with the code its message names.
// A call that went through while another thread's capture was open is logged
// too: in relaxed mode the oracle counts it as hidden (hit or miss of the cache:
// LibTorch does not say which).
template <class Op>
bool guarded(LogSink& sink, Role role, int thread, const char* api, bool foreign, Op op) {
  try {
    op();
    if (foreign) sink.call(role, thread, api, cudaSuccess, true);
    return true;
  } catch (const std::exception& e) {
    sink.call(role, thread, api, code_in_message(e.what()), foreign);
    cudaGetLastError();
    return false;
  }
}

}  // namespace

racelab::Observation run_trial(const racelab::TrialInput& in) {
  if (!no_device_reason().empty()) {
    racelab::Observation o;
    o.errors.push_back(no_device_reason());
    o.metrics["bad_input"] = true;
    return o;
  }
  const Plan plan = plan_for(in.mitigation);
  const int kernels = static_cast<int>(in.knobs.at("kernels").get<int64_t>());
  const int iterations = static_cast<int>(in.knobs.at("iterations").get<int64_t>());
  const int64_t n = in.knobs.at("bytes").get<int64_t>() / 4;
  const int allocating = in.threads > 1 ? in.threads - 1 : 0;
  const auto cuda = at::TensorOptions().dtype(at::kFloat).device(at::Device(at::kCUDA, 0));
  const auto pinned = at::TensorOptions().dtype(at::kFloat).pinned_memory(true);
  at::NoGradGuard no_grad;

  TrialLog log;
  log.relaxed = plan.mode == cudaStreamCaptureModeRelaxed;
  LogSink sink(&log);
  at::cuda::getCurrentCUDAStream().synchronize();
  empty_device_cache();
  if (plan.warm_pool) {
    // Every tensor the allocating threads will ask for, made and dropped: cached blocks.
    std::vector<at::Tensor> warm;
    for (int i = 0; i < allocating * iterations; ++i) warm.push_back(at::empty({n}, cuda));
    for (int i = 0; i < iterations; ++i) warm.push_back(at::empty({n}, pinned));
  }
  racelab::Mutex lock("cuda.capture_lock");
  std::atomic<int> open{0};
  {
    std::vector<racelab::Thread> threads;
    threads.emplace_back([&] {
      at::NoGradGuard ng;
      at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
      c10::cuda::CUDAStreamGuard guard(side);
      at::Tensor input = at::ones({n}, cuda);
      side.synchronize();
      std::vector<at::Tensor> outs;
      at::cuda::CUDAGraph graph;
      racelab::point("cuda.capture.begin", &open, racelab::Access::kWrite);
      if (plan.lock) lock.lock();
      bool ok = guarded(sink, Role::kCapture, 0, "CUDAGraph::capture_begin", false,
                        [&] { capture_begin(graph, plan.mode); });
      if (ok) {
        open.fetch_add(1);
        for (int k = 0; k < kernels && ok; ++k) {
          racelab::point("cuda.capture.launch", &open, racelab::Access::kRead);
          ok = guarded(sink, Role::kCapture, 0, "at::mul (captured)", false,
                       [&] { outs.push_back(input * static_cast<float>(k + 1)); });
        }
        racelab::point("cuda.capture.end", &open, racelab::Access::kWrite);
        ok = guarded(sink, Role::kCapture, 0, "CUDAGraph::capture_end", false, [&] { graph.capture_end(); }) && ok;
        open.fetch_sub(1);
      }
      if (plan.lock) lock.unlock();
      if (ok && guarded(sink, Role::kCapture, 0, "CUDAGraph::replay", false, [&] {
            graph.replay();
            side.synchronize();
          })) {
        sink.replayed();
        for (size_t k = 0; k < outs.size(); ++k)
          if (!at::all(outs[k].cpu() == static_cast<float>(k + 1)).item<bool>()) {
            sink.mismatch("the replayed CUDAGraph left output " + std::to_string(k) + " wrong");
            break;
          }
      }
    });
    for (int t = 1; t <= allocating; ++t)
      threads.emplace_back([&, t] {
        at::NoGradGuard ng;
        std::vector<at::Tensor> held;
        for (int i = 0; i < iterations; ++i) {
          const bool loader = t == 1;
          if (loader) {
            racelab::point("cuda.loader.pin", &open, racelab::Access::kRead);
            if (plan.lock) lock.lock();
            const bool foreign = open.load() > 0;
            guarded(sink, Role::kLoader, t, "at::empty(pinned)", foreign,
                    [&] { held.push_back(at::empty({n}, pinned)); });
            if (plan.lock) lock.unlock();
          }
          racelab::point(loader ? "cuda.loader.alloc" : "cuda.worker.alloc", &open, racelab::Access::kRead);
          if (plan.lock) lock.lock();
          const bool foreign = open.load() > 0;
          guarded(sink, loader ? Role::kLoader : Role::kWorker, t, "at::empty(cuda)", foreign,
                  [&] { held.push_back(at::empty({n}, cuda)); });
          if (plan.lock) lock.unlock();
        }
      });
  }
  racelab::Observation obs = observe(log);
  obs.metrics["capture_mode"] = mode_name(plan.mode);
  obs.metrics["libtorch"] = racelab::compile::libtorch_full_version();
  return obs;
}

}  // namespace racelab::cuda::torch_form
