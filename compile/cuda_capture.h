// compile/cuda_capture.h -- the CUDA runtime's stream-capture rules, modelled
// on the CPU (docs/ARCHITECTURE.md, "The CUDA graph-capture race"). LibTorch-free
// and CUDA-free on purpose: it runs on every machine, and the ThreadSanitizer
// build compiles it in seconds. Facts of the CUDA runtime modelled, no code
// copied; names follow the real API so that this model and the real runtime can
// be compared outcome for outcome.
//
// What lives here, and which CUDA object it stands for:
//   - Runtime                  one CUDA context (one process on one device):
//                              streams, ongoing capture sequences, the threads'
//                              capture-interaction modes, device and pinned memory
//   - stream_begin_capture     cudaStreamBeginCapture(stream, mode)
//   - stream_end_capture       cudaStreamEndCapture: the graph, or a NULL graph
//                              and cudaErrorStreamCaptureInvalidated
//   - thread_exchange_capture_mode  cudaThreadExchangeStreamCaptureMode
//   - the "potentially unsafe" calls:
//       malloc                 cudaMalloc
//       host_alloc             cudaHostAlloc (pinned host memory)
//       memcpy                 cudaMemcpy (the legacy stream, synchronous)
//       device_synchronize     cudaDeviceSynchronize (a synchronising call)
//   - launch, memcpy_async     a kernel launch / cudaMemcpyAsync on a stream:
//                              recorded into the graph when the stream captures
//   - graph_instantiate, graph_launch   cudaGraphInstantiate, cudaGraphLaunch
//
// The rule (CUDA's documentation of cudaThreadExchangeStreamCaptureMode). A
// thread's interaction mode starts as global. A potentially unsafe call from
// thread T is PROHIBITED when
//   - T's mode is global or thread_local and T itself has an ongoing capture
//     that was not begun in relaxed mode, or
//   - T's mode is global and ANOTHER thread has an ongoing capture begun in
//     global mode.
// A relaxed thread is never prohibited. A prohibited call does nothing, returns
// cudaErrorStreamCaptureUnsupported ("operation not permitted when stream is
// capturing") to its caller, and invalidates every capture it conflicted with;
// the capturing thread then gets cudaErrorStreamCaptureInvalidated ("operation
// failed due to a previous error during capture") from its next launch into
// the stream and from cudaStreamEndCapture, which returns no graph.
//
// The outcome mapping, per capture mode (the racelab mitigation that chooses
// it in the cuda_graph_capture workload), when another thread makes an unsafe
// call -- a pinned allocation, a cache miss that reaches cudaMalloc, a legacy
// memcpy, a synchronise -- while the capture is open:
//
//   capture mode   mitigation       the other thread   the capturing thread      trial class
//   global         none             Unsupported (900)  Invalidated (901) at      error
//                                                       end capture, no graph
//   thread_local   isolate_thread   cudaSuccess        cudaSuccess, the graph    holds
//                                                       replays correctly
//   relaxed        disable_check    cudaSuccess        cudaSuccess               silent_fallback
//
// and when the CAPTURING thread makes an unsafe call of its own: Unsupported to
// it and Invalidated at end capture in global and thread_local mode (error);
// nothing in relaxed mode, where the call runs once, now, and is not part of
// the graph (silent_fallback: the model counts it).
//
// Relaxed mode is the analogue of disable_check elsewhere in the catalogue: the
// conflict is still there, the check is off. Every unsafe call that a relaxed
// capture let through, and that the same capture begun in global mode would
// have refused, is counted (RuntimeCounters::hidden_conflicts; the workload
// reports it as silent_fallback). thread_local is the analogue of
// isolate_thread: other threads' calls do not conflict with the capture at
// all, so nothing is hidden and nothing is counted. A thread that exchanged its
// OWN mode to relaxed (as PyTorch's caching allocator does around its cudaMalloc
// during capture) is not counted either: that is a deliberate, safe exchange.
//
// Interleaving points (compile/point_names.h) sit before every call, naming the
// runtime's capture table as the object read or written.
#ifndef RACELAB_COMPILE_CUDA_CAPTURE_H_
#define RACELAB_COMPILE_CUDA_CAPTURE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace racelab::compile::cuda {

// cudaStreamCaptureMode, same values.
enum class CaptureMode { kGlobal = 0, kThreadLocal = 1, kRelaxed = 2 };
// "global" | "thread_local" | "relaxed" (the knob's words).
const char* mode_name(CaptureMode mode);
// "cudaStreamCaptureModeGlobal" etc.
const char* mode_enum_name(CaptureMode mode);
// Throws std::invalid_argument naming the accepted words.
CaptureMode parse_capture_mode(const std::string& word);

// cudaError_t, the values of the real enum (driver_types.h).
enum class Error {
  kSuccess = 0,
  kInvalidValue = 1,
  kMemoryAllocation = 2,
  kIllegalState = 401,
  kIllegalAddress = 700,
  kStreamCaptureUnsupported = 900,
  kStreamCaptureInvalidated = 901,
  kStreamCaptureWrongThread = 908,
};
// The enum's name, e.g. "cudaErrorStreamCaptureUnsupported" (cudaGetErrorName).
const char* error_name(Error e);
// cudaGetErrorString's text, e.g. "operation not permitted when stream is capturing".
const char* error_string(Error e);
// "<api>: <name> (<text>)", the form every error message of the model takes.
std::string describe(const std::string& api, Error e);

// cudaStreamCaptureStatus.
enum class CaptureStatus { kNone = 0, kActive = 1, kInvalidated = 2 };

using Stream = int;                       // 0 is the legacy default stream
inline constexpr Stream kLegacyStream = 0;
using Ptr = uint64_t;                     // a device or pinned host address; 0 is NULL

// Memory as kernels see it: each allocation is `size` 64-bit words.
class Memory {
 public:
  // Throws std::out_of_range for an address that is not a live allocation
  // (the launch then returns cudaErrorIllegalAddress).
  std::vector<int64_t>& at(Ptr p);
  const std::vector<int64_t>& at(Ptr p) const;

 private:
  friend class Runtime;
  std::map<Ptr, std::vector<int64_t>> blocks_;
};

// A kernel: a name and what it does to memory. It must not call the runtime.
struct Kernel {
  std::string name;
  std::function<void(Memory&)> body;
};

// cudaGraph_t / cudaGraphExec_t: the recorded work, in order.
struct Graph {
  uint64_t capture_id = 0;
  std::vector<Kernel> nodes;
  bool valid() const { return capture_id != 0; }
};

struct RuntimeCounters {
  std::atomic<int64_t> unsafe_calls{0};       // malloc, host_alloc, memcpy, synchronise
  std::atomic<int64_t> prohibited{0};         // of those, refused (cudaErrorStreamCaptureUnsupported)
  std::atomic<int64_t> hidden_conflicts{0};   // let through only because a capture was relaxed
  std::atomic<int64_t> invalidations{0};      // captures invalidated
  std::atomic<int64_t> device_mallocs{0};     // successful cudaMalloc
  std::atomic<int64_t> host_allocs{0};        // successful cudaHostAlloc
  std::atomic<int64_t> captures{0};           // captures begun
  std::atomic<int64_t> graph_launches{0};
};

// Global state that must be back to its initial value after a trial.
struct RuntimeSnapshot {
  std::vector<std::string> open_captures;   // "stream 1 (global, thread 3, active)"
  std::vector<std::string> exchanged_modes; // "thread 3 left its mode at relaxed"
  // "" when equal, else a sentence naming what differs.
  std::string diff(const RuntimeSnapshot& initial) const;
};

class Runtime {
 public:
  Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The process's context, unless the calling thread entered a ScopedCudaRuntime.
  static Runtime& process();

  // cudaStreamCreateWithFlags(cudaStreamNonBlocking): a new stream id (> 0).
  Stream create_stream();

  // cudaStreamBeginCapture. kInvalidValue for the legacy stream, an unknown
  // stream or one that is already capturing.
  Error stream_begin_capture(Stream s, CaptureMode mode);
  // cudaStreamEndCapture. Ends the sequence in every case but the wrong
  // thread. *graph is the recorded work, or an invalid (NULL) graph with
  // kStreamCaptureInvalidated. kIllegalState when the stream does not capture;
  // kStreamCaptureWrongThread when a non-relaxed capture is ended by another
  // thread than the one that began it (the capture stays open).
  Error stream_end_capture(Stream s, Graph* graph);
  // cudaStreamGetCaptureInfo's status.
  CaptureStatus stream_capture_status(Stream s) const;
  // The id of the stream's ongoing capture sequence, 0 if none.
  uint64_t stream_capture_id(Stream s) const;

  // cudaThreadExchangeStreamCaptureMode: sets the calling thread's mode to
  // *mode and writes the previous one back into *mode.
  Error thread_exchange_capture_mode(CaptureMode* mode);
  CaptureMode thread_capture_mode() const;

  // The potentially unsafe calls. Each checks the rule above first.
  Error malloc(Ptr* out, size_t words);      // cudaMalloc: zeroed device memory
  Error host_alloc(Ptr* out, size_t words);  // cudaHostAlloc: pinned host memory
  Error memcpy(Ptr dst, Ptr src);            // cudaMemcpy on the legacy stream (whole blocks)
  Error device_synchronize();                // cudaDeviceSynchronize

  // Stream-ordered work: recorded into the graph when `s` captures (an
  // invalidated capture refuses it with kStreamCaptureInvalidated), run now
  // otherwise (the model's streams complete at once).
  Error launch(Stream s, Kernel kernel);
  Error memcpy_async(Ptr dst, Ptr src, Stream s);

  // cudaGraphInstantiate / cudaGraphLaunch. Launching an invalid graph is kInvalidValue.
  Error graph_instantiate(Graph* exec, const Graph& graph);
  Error graph_launch(const Graph& exec, Stream s);

  // What the host sees of memory outside the API (filling a pinned buffer,
  // reading one back): no point, no rule. Throws std::out_of_range.
  std::vector<int64_t> read(Ptr p) const;
  void write(Ptr p, const std::vector<int64_t>& words);

  RuntimeCounters& counters() { return counters_; }
  const RuntimeCounters& counters() const { return counters_; }
  // The cause of every invalidation so far, e.g.
  // "stream 1's capture invalidated by cudaHostAlloc from thread 2".
  std::vector<std::string> invalidation_causes() const;

  RuntimeSnapshot snapshot() const;
  // No capture, every thread's mode global, no memory, no streams, counters zero.
  void reset();

  // This thread's number as the runtime reports it (1, 2, ... in order of
  // first use; stable for the thread's life).
  static int thread_number();

 private:
  struct Capture {
    uint64_t id = 0;
    CaptureMode mode = CaptureMode::kGlobal;
    int owner = 0;  // thread_number() of the thread that began it
    bool invalidated = false;
    std::vector<Kernel> nodes;
  };

  // The rule. With mu_ held: refuses (and invalidates) or lets the call
  // through; counts hidden conflicts.
  Error check_unsafe_locked(const char* api);
  Error enqueue(Stream s, Kernel kernel);
  Ptr allocate_locked(size_t words);

  mutable std::mutex mu_;
  Stream next_stream_ = 1;
  std::map<Stream, bool> streams_;       // the streams created (value unused)
  std::map<Stream, Capture> captures_;   // ongoing capture sequences by stream
  uint64_t next_capture_id_ = 1;
  std::map<int, CaptureMode> modes_;     // threads whose mode is not global
  Memory memory_;
  Ptr next_address_ = 0x10000;
  std::vector<std::string> causes_;
  RuntimeCounters counters_;
};

// The runtime of the calling thread: process() unless inside a ScopedCudaRuntime.
Runtime& current_runtime();
// Makes `rt` the calling thread's runtime while it lives: the isolate_process
// mitigation gives a thread a context of its own, as a separate process has.
class ScopedCudaRuntime {
 public:
  explicit ScopedCudaRuntime(Runtime& rt);
  ~ScopedCudaRuntime();
  ScopedCudaRuntime(const ScopedCudaRuntime&) = delete;
  ScopedCudaRuntime& operator=(const ScopedCudaRuntime&) = delete;

 private:
  Runtime* previous_;
};

// at::cuda::CUDAStreamCaptureModeGuard: exchanges the calling thread's mode for
// `mode` and puts the previous one back on destruction.
class CaptureModeGuard {
 public:
  CaptureModeGuard(Runtime& rt, CaptureMode mode);
  // Reaches an interleaving point, which throws racelab::TrialAborted when a
  // controlled trial is abandoned (never while unwinding).
  ~CaptureModeGuard() noexcept(false);
  CaptureModeGuard(const CaptureModeGuard&) = delete;
  CaptureModeGuard& operator=(const CaptureModeGuard&) = delete;

 private:
  Runtime& rt_;
  CaptureMode previous_;
};

}  // namespace racelab::compile::cuda

#endif  // RACELAB_COMPILE_CUDA_CAPTURE_H_
