// engine/worker_channel.h -- what the supervisor (parent) and the trial
// worker (child) agree on: the file descriptors and the shared-memory trace.
// Internal to the engine; see engine/supervisor.h for the protocol.
#ifndef RACELAB_ENGINE_WORKER_CHANNEL_H_
#define RACELAB_ENGINE_WORKER_CHANNEL_H_

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>

namespace racelab {

// The worker's descriptors.
inline constexpr int kSpecFd = 3;    // <- trial specs, one JSON line each
inline constexpr int kResultFd = 4;  // -> trial results, one JSON line each
inline constexpr int kTraceFd = 5;   // the shared trace below

constexpr int64_t kTraceMax = 1 << 16;  // decisions kept for crash recovery

struct TraceRec {
  int32_t thread;
  int32_t requester;
  uint64_t runnable;  // bit i: thread i could run (threads >= 64 are not recorded)
  uint8_t preemption;
  uint8_t requester_runnable;
  char point[46];
};

struct SharedTrace {
  std::atomic<int64_t> trial;
  std::atomic<int64_t> count;
  TraceRec recs[kTraceMax];
};

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
