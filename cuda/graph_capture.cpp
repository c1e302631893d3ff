// cuda/graph_capture.cpp -- the real graph-capture race, one trial (graph_capture.h).
#include "cuda/graph_capture.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda/caching_pool.h"
#include "cuda/capture_child.h"
#include "cuda/capture_loop.h"
#include "cuda/capture_oracle.h"
#include "engine/child_process.h"
#include "racelab/point.h"
#include "racelab/sync.h"


namespace racelab::cuda {

const std::vector<std::string>& mitigations() {
  // The order of racelab's mitigation list (compile/mitigation/), as the model's scenario has it.
  static const std::vector<std::string> names = {"none",       "disable_check",  "global_lock",
                                                 "precompile", "isolate_thread", "isolate_process"};
  return names;
}

Plan plan_for(const std::string& m) {
  Plan p;
  if (m == "none") return p;
  if (m == "global_lock") p.lock = true;
  else if (m == "isolate_thread") p.mode = cudaStreamCaptureModeThreadLocal;
  else if (m == "precompile") p.warm_pool = true;
  else if (m == "isolate_process") p.child_process = true;
  else if (m == "disable_check") p.mode = cudaStreamCaptureModeRelaxed;
  else throw std::invalid_argument("mitigation '" + m + "': unknown for workload " + kWorkloadName);
  return p;
}

const char* mode_name(cudaStreamCaptureMode mode) {
  switch (mode) {
    case cudaStreamCaptureModeGlobal: return "global";
    case cudaStreamCaptureModeThreadLocal: return "thread_local";
    case cudaStreamCaptureModeRelaxed: return "relaxed";
  }
  return "?";
}

const std::string& no_device_reason() {
  static const std::string reason = [] {
    int n = 0;
    const cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
      cudaGetLastError();
      return "no CUDA device: cudaGetDeviceCount returned " + code_name(rc) + " (" + cudaGetErrorString(rc) + ")";
    }
    if (n == 0) return std::string("no CUDA device: cudaGetDeviceCount found 0 devices");
    return std::string();
  }();
  return reason;
}

nlohmann::json default_knobs() {
  return nlohmann::json{{"iterations", 2}, {"kernels", 2}, {"bytes", 65536}};
}

void check_knobs(const nlohmann::json& knobs) {
  racelab::int_knob(knobs, "iterations", 1, 100);
  racelab::int_knob(knobs, "kernels", 1, 100);
  racelab::int_knob(knobs, "bytes", 4, 64 << 20);
}

namespace {

// An allocating thread's one allocation through the pool: a point, then (under
// global_lock) the lock, then the pool. A miss is a real runtime call, logged
// with its code and whether a capture was open in another thread.
void* allocate(CachingPool& pool, CachingPool::Kind kind, size_t bytes, const char* point, Role role, int thread,
               racelab::Mutex* lock, std::atomic<int>* open, LogSink& sink) {
  racelab::point(point, open, racelab::Access::kRead);
  if (lock) lock->lock();
  const bool foreign = open->load() > 0;
  void* p = nullptr;
  bool missed = false;
  const cudaError_t rc = pool.allocate(kind, bytes, &p, &missed);
  if (missed) sink.call(role, thread, kind == CachingPool::Kind::kDevice ? "cudaMalloc" : "cudaHostAlloc", rc, foreign);
  if (lock) lock->unlock();
  return p;
}

// The pipe's ends sit at 10 or above, never the child's standard output.
constexpr int kParentFdFloor = 10;

// isolate_process: the capture in a child process (capture_child.h), waited for
// by the capturing thread; its calls come back into this trial's log.
void capture_in_child(const CaptureSpec& spec, LogSink& sink) {
  const std::string exe = capture_child_path();
  racelab::Pipe out;
  try {
    out = racelab::open_pipe(kParentFdFloor, "isolate_process");
  } catch (const std::exception& e) {
    sink.problem(e.what());
    return;
  }
  racelab::ChildSpec child;
  child.argv = capture_child_args(exe, spec);
  child.dup2 = {{out.write_end, STDOUT_FILENO}};
  child.parent_pid_env = kCaptureParentPidEnv;  // the child dies with this trial process
  std::string error;
  const pid_t pid = racelab::spawn_child(child, &error);
  racelab::close_fd(&out.write_end);
  std::string output;
  if (pid >= 0) {
    char buf[4096];
    ssize_t got;
    while ((got = ::read(out.read_end, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
      if (got > 0) output.append(buf, static_cast<size_t>(got));
    }
  }
  racelab::close_fd(&out.read_end);
  if (pid < 0) {
    sink.problem("isolate_process: " + error);
    return;
  }
  const int status = racelab::wait_child(pid);
  std::string problem;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    problem = "isolate_process: " + exe + " ended with status " + std::to_string(status);
  else if (!parse_capture_child_output(output, sink, &problem))
    problem = "isolate_process: " + problem;
  if (!problem.empty()) sink.problem(problem);
}

}  // namespace

racelab::Observation run_trial(const racelab::TrialInput& in) {
  if (!no_device_reason().empty()) {
    racelab::Observation o;
    o.errors.push_back(no_device_reason());
    o.metrics["bad_input"] = true;  // not an outcome: racelab stops and says why (exit 3)
    return o;
  }
  const Plan plan = plan_for(in.mitigation);
  CaptureSpec spec;
  spec.kernels = static_cast<int>(in.knobs.at("kernels").get<int64_t>());
  spec.bytes = static_cast<size_t>(in.knobs.at("bytes").get<int64_t>()) / sizeof(float) * sizeof(float);
  spec.mode = plan.mode;
  const int allocs = static_cast<int>(in.knobs.at("iterations").get<int64_t>());
  const int allocating = in.threads > 1 ? in.threads - 1 : 0;  // the loader and the workers

  TrialLog log;
  log.relaxed = plan.mode == cudaStreamCaptureModeRelaxed;
  LogSink sink(&log);
  // The context exists before any thread races, so no trial times its creation.
  cudaError_t rc = cudaFree(nullptr);
  if (rc != cudaSuccess) {
    sink.call(Role::kCapture, 0, "cudaFree(0)", rc);
    return observe(log);
  }
  CachingPool pool;
  if (plan.warm_pool) {
    rc = pool.warm(CachingPool::Kind::kDevice, spec.bytes, spec.kernels + allocating * allocs);
    if (rc == cudaSuccess && allocating > 0) rc = pool.warm(CachingPool::Kind::kPinned, spec.bytes, allocs);
    if (rc != cudaSuccess) {
      sink.call(Role::kCapture, 0, "warm the pool", rc);
      return observe(log);
    }
  }
  const int warm_misses = pool.misses();
  racelab::Mutex lock("cuda.capture_lock");
  racelab::Mutex* lk = plan.lock ? &lock : nullptr;
  std::atomic<int> open{0};
  {
    std::vector<racelab::Thread> threads;
    threads.emplace_back([&] {
      if (plan.child_process) capture_in_child(spec, sink);
      else capture_loop(spec, pool, lk, &open, sink);
    });
    for (int t = 1; t <= allocating; ++t)
      threads.emplace_back([&, t] {
        std::vector<std::pair<CachingPool::Kind, void*>> held;
        for (int i = 0; i < allocs; ++i) {
          if (t == 1)
            held.emplace_back(CachingPool::Kind::kPinned,
                              allocate(pool, CachingPool::Kind::kPinned, spec.bytes, "cuda.loader.pin", Role::kLoader,
                                       t, lk, &open, sink));
          held.emplace_back(CachingPool::Kind::kDevice,
                            allocate(pool, CachingPool::Kind::kDevice, spec.bytes,
                                     t == 1 ? "cuda.loader.alloc" : "cuda.worker.alloc",
                                     t == 1 ? Role::kLoader : Role::kWorker, t, lk, &open, sink));
        }
        for (auto& [kind, p] : held) pool.recycle(kind, spec.bytes, p);
        cudaGetLastError();
      });
  }
  const int misses = pool.misses() - warm_misses;
  pool.release();
  racelab::Observation obs = observe(log);
  obs.metrics["pool_misses"] = misses;  // runtime calls in the racing section
  obs.metrics["capture_mode"] = mode_name(plan.mode);
  return obs;
}

}  // namespace racelab::cuda
