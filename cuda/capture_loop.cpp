// cuda/capture_loop.cpp -- the capturing thread's work (capture_loop.h).
#include "cuda/capture_loop.h"

#include <string>
#include <utility>
#include <vector>

#include "cuda/fill_kernel.h"
#include "racelab/point.h"

namespace racelab::cuda {

void LogSink::call(Role role, int thread, std::string api, cudaError_t code, bool during_foreign_capture) {
  std::lock_guard<std::mutex> lk(mu_);
  log_->calls.push_back(Call{role, thread, std::move(api), code, during_foreign_capture});
}

void LogSink::replayed() {
  std::lock_guard<std::mutex> lk(mu_);
  ++log_->captures_replayed;
}

void LogSink::mismatch(std::string what) {
  std::lock_guard<std::mutex> lk(mu_);
  log_->replay_mismatches.push_back(std::move(what));
}

void LogSink::problem(std::string what) {
  std::lock_guard<std::mutex> lk(mu_);
  log_->problems.push_back(std::move(what));
}

namespace {

// Instantiates, launches and checks the captured graph: scratch block k must
// hold k + 1 everywhere. Runs after EndCapture, outside the lock.
void replay(cudaGraph_t graph, cudaStream_t stream, const std::vector<void*>& blocks, int n, LogSink& sink) {
  cudaGraphExec_t exec = nullptr;
  cudaError_t rc = cudaGraphInstantiate(&exec, graph, 0);
  if (rc != cudaSuccess) {
    sink.call(Role::kCapture, 0, "cudaGraphInstantiate", rc);
    cudaGetLastError();
    return;
  }
  std::vector<std::vector<float>> host(blocks.size(), std::vector<float>(static_cast<size_t>(n), 0.0f));
  rc = cudaGraphLaunch(exec, stream);
  for (size_t k = 0; k < blocks.size() && rc == cudaSuccess; ++k)
    rc = cudaMemcpyAsync(host[k].data(), blocks[k], host[k].size() * sizeof(float), cudaMemcpyDeviceToHost, stream);
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(stream);
  if (rc != cudaSuccess) {
    sink.call(Role::kCapture, 0, "cudaGraphLaunch/cudaMemcpyAsync", rc);
    cudaGetLastError();
  } else {
    sink.replayed();
    std::string wrong;
    for (size_t k = 0; k < host.size() && wrong.empty(); ++k) {
      const float want = static_cast<float>(k + 1);
      for (size_t i = 0; i < host[k].size(); ++i)
        if (host[k][i] != want) {
          wrong = "the replayed graph left scratch block " + std::to_string(k) + "[" + std::to_string(i) +
                  "] = " + std::to_string(host[k][i]) + ", expected " + std::to_string(want);
          break;
        }
    }
    if (!wrong.empty()) sink.mismatch(wrong);
  }
  cudaGraphExecDestroy(exec);
}

}  // namespace

void capture_loop(const CaptureSpec& spec, CachingPool& pool, racelab::Mutex* lock, std::atomic<int>* open,
                  LogSink& sink) {
  cudaStream_t stream = nullptr;
  cudaError_t rc = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (rc != cudaSuccess) {
    sink.call(Role::kCapture, 0, "cudaStreamCreateWithFlags", rc);
    cudaGetLastError();
    return;
  }
  const int n = static_cast<int>(spec.bytes / sizeof(float));
  std::vector<void*> blocks;
  racelab::point("cuda.capture.begin", open, racelab::Access::kWrite);
  if (lock) lock->lock();
  rc = cudaStreamBeginCapture(stream, spec.mode);
  if (rc != cudaSuccess) {
    sink.call(Role::kCapture, 0, "cudaStreamBeginCapture", rc);
    cudaGetLastError();
    if (lock) lock->unlock();
    cudaStreamDestroy(stream);
    return;
  }
  open->fetch_add(1);
  for (int k = 0; k < spec.kernels; ++k) {
    racelab::point("cuda.capture.alloc", open, racelab::Access::kRead);
    void* block = nullptr;
    bool missed = false;
    rc = pool.allocate(CachingPool::Kind::kDevice, spec.bytes, &block, &missed, stream);
    if (rc != cudaSuccess) {
      sink.call(Role::kCapture, 0, "cudaMalloc", rc);
      continue;
    }
    blocks.push_back(block);
    racelab::point("cuda.capture.launch", open, racelab::Access::kRead);
    rc = launch_fill(stream, static_cast<float*>(block), n, static_cast<float>(blocks.size()));
    if (rc != cudaSuccess) sink.call(Role::kCapture, 0, "fill<<<>>>", rc);
  }
  racelab::point("cuda.capture.end", open, racelab::Access::kWrite);
  cudaGraph_t graph = nullptr;
  rc = cudaStreamEndCapture(stream, &graph);
  open->fetch_sub(1);
  if (lock) lock->unlock();
  if (rc != cudaSuccess) {
    sink.call(Role::kCapture, 0, "cudaStreamEndCapture", rc);
    cudaGetLastError();
  }
  if (rc == cudaSuccess && graph != nullptr && !blocks.empty()) replay(graph, stream, blocks, n, sink);
  if (graph != nullptr) cudaGraphDestroy(graph);
  for (void* b : blocks) pool.recycle(CachingPool::Kind::kDevice, spec.bytes, b);
  cudaStreamDestroy(stream);
  cudaGetLastError();
}

}  // namespace racelab::cuda
