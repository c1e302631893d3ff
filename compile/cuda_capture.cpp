// compile/cuda_capture.cpp -- see cuda_capture.h.
//
// One std::mutex guards the runtime's state, as the driver's own lock does. No
// interleaving point is ever reached with it held: every point comes first,
// then the lock, so a controlled scheduler can pause a thread at any point
// without another one blocking in the OS.
#include "compile/cuda_capture.h"

#include <stdexcept>
#include <utility>

#include "racelab/point.h"
#include "compile/point_names.h"

namespace racelab::compile::cuda {
namespace {

namespace P = racelab::compile::points;
using racelab::Access;

thread_local Runtime* t_current = nullptr;

std::atomic<int> g_next_thread{1};

}  // namespace

const char* mode_name(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kGlobal: return "global";
    case CaptureMode::kThreadLocal: return "thread_local";
    case CaptureMode::kRelaxed: return "relaxed";
  }
  return "?";
}

const char* mode_enum_name(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kGlobal: return "cudaStreamCaptureModeGlobal";
    case CaptureMode::kThreadLocal: return "cudaStreamCaptureModeThreadLocal";
    case CaptureMode::kRelaxed: return "cudaStreamCaptureModeRelaxed";
  }
  return "?";
}

CaptureMode parse_capture_mode(const std::string& word) {
  for (CaptureMode m : {CaptureMode::kGlobal, CaptureMode::kThreadLocal, CaptureMode::kRelaxed})
    if (word == mode_name(m)) return m;
  throw std::invalid_argument("unknown capture mode '" + word + "', expected global | thread_local | relaxed");
}

const char* error_name(Error e) {
  switch (e) {
    case Error::kSuccess: return "cudaSuccess";
    case Error::kInvalidValue: return "cudaErrorInvalidValue";
    case Error::kMemoryAllocation: return "cudaErrorMemoryAllocation";
    case Error::kIllegalState: return "cudaErrorIllegalState";
    case Error::kIllegalAddress: return "cudaErrorIllegalAddress";
    case Error::kStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case Error::kStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case Error::kStreamCaptureWrongThread: return "cudaErrorStreamCaptureWrongThread";
  }
  return "cudaErrorUnknown";
}

const char* error_string(Error e) {
  switch (e) {
    case Error::kSuccess: return "no error";
    case Error::kInvalidValue: return "invalid argument";
    case Error::kMemoryAllocation: return "out of memory";
    case Error::kIllegalState: return "operation not permitted when stream is not capturing";
    case Error::kIllegalAddress: return "an illegal memory access was encountered";
    case Error::kStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case Error::kStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case Error::kStreamCaptureWrongThread:
      return "attempt to terminate a thread-local capture sequence from another thread";
  }
  return "unknown error";
}

std::string describe(const std::string& api, Error e) {
  return api + ": " + error_name(e) + " (" + error_string(e) + ")";
}

std::vector<int64_t>& Memory::at(Ptr p) {
  auto it = blocks_.find(p);
  if (it == blocks_.end()) throw std::out_of_range("no allocation at this address");
  return it->second;
}

const std::vector<int64_t>& Memory::at(Ptr p) const {
  auto it = blocks_.find(p);
  if (it == blocks_.end()) throw std::out_of_range("no allocation at this address");
  return it->second;
}

std::string RuntimeSnapshot::diff(const RuntimeSnapshot& initial) const {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (open_captures != initial.open_captures)
    for (const auto& c : open_captures) add("a CUDA capture sequence is still open after the trial: " + c);
  if (exchanged_modes != initial.exchanged_modes)
    for (const auto& m : exchanged_modes) add(m);
  return out;
}

Runtime::Runtime() = default;

Runtime& Runtime::process() {
  static Runtime rt;
  return rt;
}

int Runtime::thread_number() {
  thread_local const int n = g_next_thread++;
  return n;
}

Stream Runtime::create_stream() {
  std::lock_guard<std::mutex> lock(mu_);
  const Stream s = next_stream_++;
  streams_[s] = true;
  return s;
}

Error Runtime::stream_begin_capture(Stream s, CaptureMode mode) {
  racelab::point(P::kCudaBeginCapture, &captures_, Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  if (s == kLegacyStream || streams_.count(s) == 0 || captures_.count(s) != 0) return Error::kInvalidValue;
  Capture c;
  c.id = next_capture_id_++;
  c.mode = mode;
  c.owner = thread_number();
  captures_[s] = std::move(c);
  ++counters_.captures;
  return Error::kSuccess;
}

Error Runtime::stream_end_capture(Stream s, Graph* graph) {
  racelab::point(P::kCudaEndCapture, &captures_, Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  *graph = Graph{};
  auto it = captures_.find(s);
  if (it == captures_.end()) return Error::kIllegalState;
  if (it->second.mode != CaptureMode::kRelaxed && it->second.owner != thread_number())
    return Error::kStreamCaptureWrongThread;
  Capture c = std::move(it->second);
  captures_.erase(it);
  if (c.invalidated) return Error::kStreamCaptureInvalidated;
  graph->capture_id = c.id;
  graph->nodes = std::move(c.nodes);
  return Error::kSuccess;
}

CaptureStatus Runtime::stream_capture_status(Stream s) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(s);
  if (it == captures_.end()) return CaptureStatus::kNone;
  return it->second.invalidated ? CaptureStatus::kInvalidated : CaptureStatus::kActive;
}

uint64_t Runtime::stream_capture_id(Stream s) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = captures_.find(s);
  return it == captures_.end() ? 0 : it->second.id;
}

Error Runtime::thread_exchange_capture_mode(CaptureMode* mode) {
  // The object is this thread's own mode: independent of every other thread.
  racelab::point(P::kCudaExchangeMode, racelab::object_id(0xC0DA0000ull + static_cast<unsigned>(thread_number())),
                 Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  const int me = thread_number();
  auto it = modes_.find(me);
  const CaptureMode previous = it == modes_.end() ? CaptureMode::kGlobal : it->second;
  if (*mode == CaptureMode::kGlobal)
    modes_.erase(me);
  else
    modes_[me] = *mode;
  *mode = previous;
  return Error::kSuccess;
}

CaptureMode Runtime::thread_capture_mode() const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = modes_.find(thread_number());
  return it == modes_.end() ? CaptureMode::kGlobal : it->second;
}

Error Runtime::check_unsafe_locked(const char* api) {
  ++counters_.unsafe_calls;
  const int me = thread_number();
  auto it = modes_.find(me);
  const CaptureMode mine = it == modes_.end() ? CaptureMode::kGlobal : it->second;
  if (mine == CaptureMode::kRelaxed) return Error::kSuccess;  // a deliberate exchange: not a hidden conflict
  bool prohibited = false;
  bool hidden = false;
  for (auto& [stream, c] : captures_) {
    const bool own = c.owner == me;
    // Would a capture begun in global mode refuse this call?
    const bool conflicts = own || mine == CaptureMode::kGlobal;
    if (!conflicts) continue;
    bool refuses = false;
    switch (c.mode) {
      case CaptureMode::kGlobal: refuses = true; break;
      case CaptureMode::kThreadLocal: refuses = own; break;
      case CaptureMode::kRelaxed: hidden = true; break;
    }
    if (!refuses) continue;
    prohibited = true;
    if (!c.invalidated) {
      c.invalidated = true;
      ++counters_.invalidations;
      causes_.push_back("stream " + std::to_string(stream) + "'s capture (" + mode_name(c.mode) + ", thread " +
                        std::to_string(c.owner) + ") invalidated by " + api + " from thread " + std::to_string(me));
    }
  }
  if (prohibited) {
    ++counters_.prohibited;
    return Error::kStreamCaptureUnsupported;
  }
  if (hidden) ++counters_.hidden_conflicts;
  return Error::kSuccess;
}

Ptr Runtime::allocate_locked(size_t words) {
  const Ptr p = next_address_;
  next_address_ += static_cast<Ptr>((words + 1) * 8);
  memory_.blocks_[p] = std::vector<int64_t>(words, 0);
  return p;
}

Error Runtime::malloc(Ptr* out, size_t words) {
  racelab::point(P::kCudaMalloc, &captures_, Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  *out = 0;
  if (words == 0) return Error::kInvalidValue;
  if (Error e = check_unsafe_locked("cudaMalloc"); e != Error::kSuccess) return e;
  *out = allocate_locked(words);
  ++counters_.device_mallocs;
  return Error::kSuccess;
}

Error Runtime::host_alloc(Ptr* out, size_t words) {
  racelab::point(P::kCudaHostAlloc, &captures_, Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  *out = 0;
  if (words == 0) return Error::kInvalidValue;
  if (Error e = check_unsafe_locked("cudaHostAlloc"); e != Error::kSuccess) return e;
  *out = allocate_locked(words);
  ++counters_.host_allocs;
  return Error::kSuccess;
}

Error Runtime::memcpy(Ptr dst, Ptr src) {
  racelab::point(P::kCudaMemcpy, &captures_, Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  if (Error e = check_unsafe_locked("cudaMemcpy"); e != Error::kSuccess) return e;
  try {
    memory_.at(dst) = memory_.at(src);
  } catch (const std::out_of_range&) {
    return Error::kInvalidValue;
  }
  return Error::kSuccess;
}

Error Runtime::device_synchronize() {
  racelab::point(P::kCudaSynchronize, &captures_, Access::kWrite);
  std::lock_guard<std::mutex> lock(mu_);
  return check_unsafe_locked("cudaDeviceSynchronize");
}

Error Runtime::enqueue(Stream s, Kernel kernel) {
  std::lock_guard<std::mutex> lock(mu_);
  if (s != kLegacyStream && streams_.count(s) == 0) return Error::kInvalidValue;
  auto it = captures_.find(s);
  if (it != captures_.end()) {
    if (it->second.invalidated) return Error::kStreamCaptureInvalidated;
    it->second.nodes.push_back(std::move(kernel));
    return Error::kSuccess;
  }
  try {
    kernel.body(memory_);
  } catch (const std::out_of_range&) {
    return Error::kIllegalAddress;
  }
  return Error::kSuccess;
}

Error Runtime::launch(Stream s, Kernel kernel) {
  racelab::point(P::kCudaLaunch, &captures_, Access::kRead);
  return enqueue(s, std::move(kernel));
}

Error Runtime::memcpy_async(Ptr dst, Ptr src, Stream s) {
  racelab::point(P::kCudaLaunch, &captures_, Access::kRead);
  Kernel k{"memcpy_async", [dst, src](Memory& m) { m.at(dst) = m.at(src); }};
  return enqueue(s, std::move(k));
}

Error Runtime::graph_instantiate(Graph* exec, const Graph& graph) {
  racelab::point(P::kCudaGraphInstantiate, &captures_, Access::kRead);
  *exec = Graph{};
  if (!graph.valid()) return Error::kInvalidValue;
  *exec = graph;
  return Error::kSuccess;
}

Error Runtime::graph_launch(const Graph& exec, Stream s) {
  racelab::point(P::kCudaGraphLaunch, &captures_, Access::kRead);
  if (!exec.valid()) return Error::kInvalidValue;
  std::lock_guard<std::mutex> lock(mu_);
  if (captures_.count(s) != 0) return Error::kStreamCaptureUnsupported;  // no graph-in-graph in this model
  ++counters_.graph_launches;
  try {
    for (const auto& k : exec.nodes) k.body(memory_);
  } catch (const std::out_of_range&) {
    return Error::kIllegalAddress;
  }
  return Error::kSuccess;
}

std::vector<int64_t> Runtime::read(Ptr p) const {
  std::lock_guard<std::mutex> lock(mu_);
  return memory_.at(p);
}

void Runtime::write(Ptr p, const std::vector<int64_t>& words) {
  std::lock_guard<std::mutex> lock(mu_);
  memory_.at(p) = words;
}

std::vector<std::string> Runtime::invalidation_causes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return causes_;
}

RuntimeSnapshot Runtime::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  RuntimeSnapshot s;
  for (const auto& [stream, c] : captures_)
    s.open_captures.push_back("stream " + std::to_string(stream) + " (" + mode_name(c.mode) + ", thread " +
                              std::to_string(c.owner) + (c.invalidated ? ", invalidated)" : ", active)"));
  for (const auto& [thread, mode] : modes_)
    s.exchanged_modes.push_back("thread " + std::to_string(thread) + " left its CUDA capture mode at " +
                                mode_name(mode) + " (cudaThreadExchangeStreamCaptureMode not undone)");
  return s;
}

void Runtime::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  next_stream_ = 1;
  streams_.clear();
  captures_.clear();
  next_capture_id_ = 1;
  modes_.clear();
  memory_.blocks_.clear();
  next_address_ = 0x10000;
  causes_.clear();
  counters_.unsafe_calls = 0;
  counters_.prohibited = 0;
  counters_.hidden_conflicts = 0;
  counters_.invalidations = 0;
  counters_.device_mallocs = 0;
  counters_.host_allocs = 0;
  counters_.captures = 0;
  counters_.graph_launches = 0;
}

Runtime& current_runtime() { return t_current != nullptr ? *t_current : Runtime::process(); }

ScopedCudaRuntime::ScopedCudaRuntime(Runtime& rt) : previous_(t_current) { t_current = &rt; }
ScopedCudaRuntime::~ScopedCudaRuntime() { t_current = previous_; }

CaptureModeGuard::CaptureModeGuard(Runtime& rt, CaptureMode mode) : rt_(rt), previous_(mode) {
  (void)rt_.thread_exchange_capture_mode(&previous_);
}
CaptureModeGuard::~CaptureModeGuard() noexcept(false) {
  CaptureMode m = previous_;
  (void)rt_.thread_exchange_capture_mode(&m);
}

}  // namespace racelab::compile::cuda
