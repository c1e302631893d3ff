// compile/cuda_graph_workload.cpp -- see cuda_graph_workload.h.
#include "compile/cuda_graph_workload.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "racelab/controller.h"
#include "racelab/sync.h"
#include "compile/cuda_caching_allocator.h"
#include "compile/cuda_capture.h"
#include "compile/mitigation/mitigation.h"

namespace racelab::compile::cuda {
namespace {

using mitigation::Mitigation;

CaptureMode capture_mode_for(Mitigation m) {
  if (m == Mitigation::kIsolateThread) return CaptureMode::kThreadLocal;
  if (m == Mitigation::kDisableCheck) return CaptureMode::kRelaxed;
  return CaptureMode::kGlobal;
}

// Kernel k of the captured region: dst = src + (k + 1), word by word.
Kernel add_kernel(int k, Ptr src, Ptr dst) {
  return Kernel{"add_" + std::to_string(k + 1), [k, src, dst](Memory& m) {
                  std::vector<int64_t> v = m.at(src);
                  for (auto& x : v) x += k + 1;
                  m.at(dst) = v;
                }};
}

// One trial's world: the runtimes, the allocators, the mitigation's lock and
// what the oracles saw.
class Trial {
 public:
  explicit Trial(const CudaGraphConfig& c)
      : c_(c), m_(mitigation::parse(c.mitigation)), guard_(m_), rt_(Runtime::process()),
        cache_(rt_), pinned_(rt_) {
    if (m_ == Mitigation::kIsolateProcess) {
      own_rt_ = std::make_unique<Runtime>();
      own_cache_ = std::make_unique<CachingAllocator>(*own_rt_);
      own_pinned_ = std::make_unique<HostCachingAllocator>(*own_rt_);
    }
    initial_ = rt_.snapshot();
  }

  Runtime& capture_runtime() { return own_rt_ ? *own_rt_ : rt_; }
  CachingAllocator& capture_cache() { return own_cache_ ? *own_cache_ : cache_; }
  HostCachingAllocator& capture_pinned() { return own_pinned_ ? *own_pinned_ : pinned_; }

  // precompile: the blocks the loader and the workers will hold, and the
  // capturer's static input, waiting in the caches before any thread starts.
  void warm_up() {
    if (m_ != Mitigation::kPrecompile) return;
    const int device_blocks = (c_.threads - 1) * c_.iterations + 1;
    if (cache_.reserve(static_cast<size_t>(c_.words), device_blocks) != Error::kSuccess ||
        pinned_.reserve(static_cast<size_t>(c_.words), c_.iterations) != Error::kSuccess)
      add_error("warm-up: the caching allocators could not reserve their blocks");
  }

  // Runs `step` the way the mitigation prescribes for a step that may reach the
  // runtime (global_lock: under the one lock).
  void guarded(const std::function<void()>& step) { guard_.run([] { return true; }, step); }

  void capturer() {
    Runtime& rt = capture_runtime();
    CachingAllocator& cache = capture_cache();
    const Stream s = rt.create_stream();
    const size_t words = static_cast<size_t>(c_.words);
    Ptr input = 0;
    if (Error e = cache.malloc(&input, words, s); e != Error::kSuccess)
      return add_error("capturer: cudaMalloc (static input): " + std::string(error_name(e)) + " (" +
                       error_string(e) + ")");
    std::vector<Ptr> scratch;
    Graph graph;
    std::vector<int64_t> in(words), want(words);
    int64_t added = 0;
    for (int k = 0; k < c_.kernels; ++k) added += k + 1;
    for (size_t j = 0; j < words; ++j) {
      in[j] = 100 + static_cast<int64_t>(j);
      want[j] = in[j] + added;
    }
    guarded([&] {
      if (Error e = rt.stream_begin_capture(s, capture_mode_for(m_)); e != Error::kSuccess)
        return add_error("capturer: " + describe("cudaStreamBeginCapture", e));
      Ptr cur = input;
      std::string first;
      Ptr stage = 0;
      if (c_.capture_pins) {
        // pin_memory() inside the captured region; the graph copies the
        // staged input into the static input at every replay.
        if (Error e = capture_pinned().malloc(&stage, words); e != Error::kSuccess) {
          first = describe("cudaHostAlloc (pin_memory, in capture)", e);
        } else {
          rt.write(stage, in);
          if (Error c = rt.memcpy_async(input, stage, s); c != Error::kSuccess) first = describe("cudaMemcpyAsync", c);
        }
      }
      for (int k = 0; k < c_.kernels && first.empty(); ++k) {
        Ptr out = 0;
        if (Error e = cache.malloc(&out, words, s); e != Error::kSuccess) {
          first = describe("cudaMalloc (scratch, in capture)", e);
          break;
        }
        scratch.push_back(out);
        if (Error e = rt.launch(s, add_kernel(k, cur, out)); e != Error::kSuccess) first = describe("cudaLaunchKernel", e);
        cur = out;
      }
      // The staging tensor dies at the end of the region: its block goes back
      // to the shared pinned cache, although the graph still reads it.
      if (stage != 0) capture_pinned().free(stage);
      // The capture is always ended, as torch.cuda.graph's __exit__ does.
      const Error end = rt.stream_end_capture(s, &graph);
      if (first.empty() && end != Error::kSuccess) first = describe("cudaStreamEndCapture", end);
      if (!first.empty()) add_error("capturer: " + first);
    });
    if (!graph.valid()) return;
    Graph exec;
    if (Error e = rt.graph_instantiate(&exec, graph); e != Error::kSuccess)
      return add_error("capturer: " + describe("cudaGraphInstantiate", e));
    // Replay on the input (written now, or staged by the graph's own copy);
    // the graph must compute what the host computes.
    if (!c_.capture_pins) rt.write(input, in);
    if (Error e = rt.graph_launch(exec, s); e != Error::kSuccess)
      return add_error("capturer: " + describe("cudaGraphLaunch", e));
    ++replays_;
    if (scratch.empty() || rt.read(scratch.back()) != want)
      add_wrong("capturer: the graph's replay computed something else than the host's arithmetic");
    for (Ptr p : scratch) cache.free(p);  // back to the private pool, which keeps them for the graph
    cache.free(input);
  }

  // The pin-memory thread: `iterations` batches in flight.
  void loader() {
    const Stream s = rt_.create_stream();
    const size_t words = static_cast<size_t>(c_.words);
    std::vector<std::pair<Ptr, Ptr>> batches;  // (pinned, device)
    for (int i = 0; i < c_.iterations; ++i) {
      Ptr host = 0, dev = 0;
      Error e = Error::kSuccess;
      guarded([&] { e = pinned_.malloc(&host, words); });
      if (e != Error::kSuccess) return add_error("loader: " + describe("cudaHostAlloc (pin_memory)", e));
      rt_.write(host, std::vector<int64_t>(words, 1000 + i));
      guarded([&] { e = cache_.malloc(&dev, words, s); });
      if (e != Error::kSuccess) return add_error("loader: " + describe("cudaMalloc (batch)", e));
      if (Error c = rt_.memcpy_async(dev, host, s); c != Error::kSuccess)
        return add_error("loader: " + describe("cudaMemcpyAsync", c));
      if (rt_.read(dev) != std::vector<int64_t>(words, 1000 + i))
        add_wrong("loader: batch " + std::to_string(i) + " arrived on the device changed");
      batches.emplace_back(host, dev);
    }
    for (auto [host, dev] : batches) {
      cache_.free(dev);
      pinned_.free(host);
    }
  }

  // A training thread: `iterations` activation blocks held until the end.
  void worker(int number) {
    const Stream s = rt_.create_stream();
    const size_t words = static_cast<size_t>(c_.words);
    std::vector<Ptr> held;
    for (int i = 0; i < c_.iterations; ++i) {
      Ptr p = 0;
      Error e = Error::kSuccess;
      guarded([&] { e = cache_.malloc(&p, words, s); });
      if (e != Error::kSuccess)
        return add_error("worker " + std::to_string(number) + ": " + describe("cudaMalloc (activation)", e));
      const int64_t value = number * 100 + i;
      if (Error l = rt_.launch(s, Kernel{"fill", [p, value](Memory& m) {
                                    for (auto& x : m.at(p)) x = value;
                                  }});
          l != Error::kSuccess)
        return add_error("worker " + std::to_string(number) + ": " + describe("cudaLaunchKernel", l));
      if (rt_.read(p) != std::vector<int64_t>(words, value))
        add_wrong("worker " + std::to_string(number) + ": its activation block holds another thread's data");
      held.push_back(p);
    }
    for (Ptr p : held) cache_.free(p);
  }

  void run() {
    warm_up();
    const int64_t mallocs_before = rt_.counters().device_mallocs + rt_.counters().host_allocs;
    {
      std::vector<racelab::Thread> threads;
      for (int t = 1; t <= c_.threads; ++t) {
        threads.emplace_back([this, t] {
          try {
            if (t == 1) {
              ScopedCudaRuntime in(capture_runtime());
              capturer();
            } else if (t == 2) {
              loader();
            } else {
              worker(t);
            }
          } catch (const racelab::TrialAborted&) {
            throw;
          } catch (const std::exception& e) {
            add_error("thread " + std::to_string(t) + ": " + e.what());
          }
        });
      }
      for (auto& t : threads) t.join();
    }
    runtime_calls_in_trial_ = rt_.counters().device_mallocs + rt_.counters().host_allocs - mallocs_before;
  }

  void add_error(const std::string& e) {
    std::lock_guard<std::mutex> lock(mu_);
    result_.errors.push_back(e);
  }
  void add_wrong(const std::string& w) {
    std::lock_guard<std::mutex> lock(mu_);
    result_.wrong_result += (result_.wrong_result.empty() ? "" : "; ") + w;
  }

  MicroResult finish() {
    std::string stuck = rt_.snapshot().diff(initial_);
    if (own_rt_) {
      const std::string d = own_rt_->snapshot().diff(RuntimeSnapshot{});
      if (!d.empty()) stuck += (stuck.empty() ? "" : "; ") + ("the capture's own context: " + d);
    }
    result_.stuck_state = stuck;
    const RuntimeCounters& k = rt_.counters();
    int64_t hidden = k.hidden_conflicts;
    if (own_rt_) hidden += own_rt_->counters().hidden_conflicts;
    result_.silent_fallbacks = hidden;
    const CacheStats dev = cache_.stats(), host = pinned_.stats();
    result_.metrics["hidden_conflicts"] = static_cast<double>(hidden);
    result_.metrics["prohibited_calls"] = static_cast<double>(k.prohibited);
    result_.metrics["invalidations"] = static_cast<double>(k.invalidations);
    result_.metrics["runtime_allocs_in_trial"] = static_cast<double>(runtime_calls_in_trial_);
    result_.metrics["cache_hits"] = static_cast<double>(dev.hits + host.hits);
    result_.metrics["cache_misses"] = static_cast<double>(dev.misses + host.misses);
    result_.metrics["graph_replays"] = static_cast<double>(replays_);
    return result_;
  }

 private:
  CudaGraphConfig c_;
  Mitigation m_;
  mitigation::Guard guard_;
  Runtime& rt_;
  CachingAllocator cache_;
  HostCachingAllocator pinned_;
  std::unique_ptr<Runtime> own_rt_;
  std::unique_ptr<CachingAllocator> own_cache_;
  std::unique_ptr<HostCachingAllocator> own_pinned_;
  RuntimeSnapshot initial_;
  std::mutex mu_;
  MicroResult result_;
  int64_t replays_ = 0;
  int64_t runtime_calls_in_trial_ = 0;
};

}  // namespace

std::string cuda_graph_description() {
  return "CUDA graph capture (CPU model of the CUDA runtime): while a capture in global mode is open, another "
         "thread's cudaMalloc or cudaHostAlloc (a caching-allocator miss, the DataLoader's pin-memory thread) "
         "fails with cudaErrorStreamCaptureUnsupported and the capturer gets cudaErrorStreamCaptureInvalidated";
}

std::vector<std::string> cuda_graph_mitigations() {
  static const std::vector<std::string> modelled{"none",           "disable_check",  "global_lock",
                                                 "precompile",     "isolate_thread", "isolate_process"};
  std::vector<std::string> out;
  for (const auto& n : mitigation::names())  // racelab's display order
    if (std::find(modelled.begin(), modelled.end(), n) != modelled.end()) out.push_back(n);
  return out;
}

MicroResult run_cuda_graph_capture(const CudaGraphConfig& config) {
  const auto accepted = cuda_graph_mitigations();
  if (std::find(accepted.begin(), accepted.end(), config.mitigation) == accepted.end())
    throw std::invalid_argument("workload '" + std::string(kCudaGraphWorkload) + "' does not accept mitigation '" +
                                config.mitigation + "'");
  if (config.threads < 2)
    throw std::invalid_argument("workload '" + std::string(kCudaGraphWorkload) +
                                "' needs at least 2 threads (the capturer and the loader)");
  if (config.iterations < 1 || config.kernels < 1 || config.words < 1)
    throw std::invalid_argument("knobs 'iterations', 'kernels' and 'words' must be >= 1");
  const auto t0 = std::chrono::steady_clock::now();
  Trial t(config);
  t.run();
  MicroResult r = t.finish();
  r.metrics["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void reset_cuda_for_trial() { Runtime::process().reset(); }

}  // namespace racelab::compile::cuda
