// engine/worker_channel.h -- what the supervisor (parent) and the trial
// worker (child) agree on: the file descriptors and the shared-memory trace.
// Internal to the engine; see engine/supervisor.h for the protocol.
#ifndef RACELAB_ENGINE_WORKER_CHANNEL_H_
#define RACELAB_ENGINE_WORKER_CHANNEL_H_

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/trial.h"

namespace racelab {

// The worker's descriptors.
inline constexpr int kSpecFd = 3;    // <- trial specs, one JSON line each
inline constexpr int kResultFd = 4;  // -> trial results, one JSON line each
inline constexpr int kTraceFd = 5;   // the shared trace below

// A worker that cannot start -- its environment lacks what it needs (a
// Python without torch, the racelab package nowhere) -- exits with this
// status before it begins a trial (python/racelab/worker.py EXIT_BAD_INPUT):
// the supervisor reports bad input, never a crash of the program.
inline constexpr int kWorkerBadEnvironmentExit = 3;

constexpr int64_t kTraceMax = 1 << 16;  // decisions kept for crash recovery

struct TraceRec {
  int32_t thread;
  int32_t requester;
  uint64_t runnable;  // bit i: thread i could run (threads >= 64 are not recorded)
  uint8_t preemption;
  uint8_t requester_runnable;
  uint8_t let_go;
  char point[45];
};

// The worker's last words: how the signal that is killing it was sent, written
// by the worker's handler (engine/worker.cpp) just before it dies of it. The
// supervisor reads them to tell the system under test's own crash (a fault, a
// signal it raised) from a kill from outside. SIGKILL leaves none. A worker
// dies once, so the supervisor clears them only when it starts one.
struct LastWords {
  std::atomic<int> signo;      // 0: none
  std::atomic<int> code;       // si_code: > 0 the kernel (a fault, a terminal), <= 0 a process
  std::atomic<int> sender;     // si_pid, for SI_USER / SI_QUEUE / SI_TKILL
};

struct SharedTrace {
  std::atomic<int64_t> trial;
  std::atomic<int64_t> count;
  LastWords last_words;
  TraceRec recs[kTraceMax];
};

// Mirrors one decision into the trace as it is made (the worker's, and the
// exec host's trial process's, Scheduler::Options::on_decision).
inline void mirror_decision(SharedTrace* trace, const DecisionView& d) {
  int64_t i = trace->count.load(std::memory_order_relaxed);
  if (i >= kTraceMax) return;
  TraceRec& rec = trace->recs[i];
  rec.thread = d.thread;
  rec.requester = d.requester;
  rec.runnable = 0;
  for (size_t k = 0; k < d.runnable_size; ++k)
    if (d.runnable[k] < 64) rec.runnable |= uint64_t{1} << d.runnable[k];
  rec.preemption = d.preemption;
  rec.requester_runnable = d.requester_runnable;
  rec.let_go = d.let_go;
  // Truncated like snprintf would, without its cost on every step.
  const size_t n = d.point == nullptr ? 0 : ::strnlen(d.point, sizeof(rec.point) - 1);
  if (n > 0) std::memcpy(rec.point, d.point, n);
  rec.point[n] = '\0';
  trace->count.store(i + 1, std::memory_order_release);
}

// The decisions mirrored so far (what survives a process that died mid-trial).
inline std::vector<Decision> read_trace(const SharedTrace& trace) {
  std::vector<Decision> out;
  int64_t n = std::min(trace.count.load(std::memory_order_acquire), kTraceMax);
  for (int64_t i = 0; i < n; ++i) {
    const TraceRec& rec = trace.recs[i];
    Decision d;
    d.step = i;
    d.thread = rec.thread;
    d.requester = rec.requester;
    d.point = std::string(rec.point, strnlen(rec.point, sizeof(rec.point)));
    d.preemption = rec.preemption != 0;
    d.requester_runnable = rec.requester_runnable != 0;
    d.let_go = rec.let_go != 0;
    for (int t = 0; t < 64; ++t)
      if (rec.runnable & (uint64_t{1} << t)) d.runnable.push_back(t);
    out.push_back(std::move(d));
  }
  return out;
}

// The environment variable that gives the worker its supervisor's pid, so it
// can tell whether the parent it was started by is still its parent.
inline constexpr const char* kSupervisorPidEnv = "RACELAB_SUPERVISOR_PID";

// Writes all of `s`, retrying on EINTR; false when the other end is gone.
inline bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace racelab

#endif  // RACELAB_ENGINE_WORKER_CHANNEL_H_
