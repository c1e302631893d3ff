#include "preload/thread_os.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "preload/control.h"
#include "preload/real.h"
#include "preload/symbols.h"

namespace racelab::preload {

namespace {

struct Slot {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> ended{false};
  std::atomic<bool> known_wait{false};
  clockid_t cpu{};
};
Slot g_slots[kMaxThreadId + 1];

// The backtrace a thread takes of itself on the signal.
constexpr int kFrames = 16;
void* g_frames[kFrames];
std::atomic<int> g_frame_count{-1};  // -1: not answered yet
std::atomic<bool> g_handler{false};
const int kWhereSignal = SIGRTMAX - 2;  // glibc keeps the lowest real-time signals for itself

void on_where_signal(int) {
  const int saved = errno;
  g_frame_count.store(::backtrace(g_frames, kFrames), std::memory_order_release);
  errno = saved;
}

bool valid(int id) { return id >= 0 && id <= kMaxThreadId; }

const char* syscall_name(long nr) {
  switch (nr) {
    case SYS_futex: return "futex";
    case SYS_read: return "read";
    case SYS_write: return "write";
    case SYS_poll: return "poll";
    case SYS_ppoll: return "ppoll";
    case SYS_select: return "select";
    case SYS_pselect6: return "pselect6";
    case SYS_epoll_wait: return "epoll_wait";
    case SYS_epoll_pwait: return "epoll_pwait";
    case SYS_nanosleep: return "nanosleep";
    case SYS_clock_nanosleep: return "clock_nanosleep";
    case SYS_wait4: return "wait4";
    case SYS_accept: return "accept";
    case SYS_recvfrom: return "recvfrom";
    case SYS_pause: return "pause";
    default: return nullptr;
  }
}

// The first whitespace-separated word of /proc/self/task/TID/FILE after `skip` words.
bool read_proc(pid_t tid, const char* file, char* buf, size_t size) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/%s", static_cast<int>(tid), file);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = ::read(fd, buf, size - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

}  // namespace

void note_thread_started(int id) {
  if (!valid(id)) return;
  Slot& s = g_slots[id];
  pthread_getcpuclockid(pthread_self(), &s.cpu);
  s.ended.store(false);
  s.tid.store(static_cast<pid_t>(::syscall(SYS_gettid)), std::memory_order_release);
}

void note_thread_ended(int id) {
  if (!valid(id)) return;
  g_slots[id].ended.store(true, std::memory_order_release);
}

KnownWait::KnownWait(int id) : id_(id) {
  if (valid(id_)) g_slots[id_].known_wait.store(true, std::memory_order_release);
}
KnownWait::~KnownWait() {
  if (valid(id_)) g_slots[id_].known_wait.store(false, std::memory_order_release);
}

bool thread_has_ended(int id) { return valid(id) && g_slots[id].ended.load(std::memory_order_acquire); }

ThreadNow thread_now(int id) {
  ThreadNow now;
  if (!valid(id)) return now;
  const Slot& s = g_slots[id];
  const pid_t tid = s.tid.load(std::memory_order_acquire);
  if (tid == 0 || s.ended.load(std::memory_order_acquire)) return now;
  timespec ts{};
  if (::clock_gettime(s.cpu, &ts) != 0) return now;  // the thread is gone
  now.known = true;
  now.known_wait = s.known_wait.load(std::memory_order_acquire);
  now.cpu_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  char buf[512];
  if (read_proc(tid, "stat", buf, sizeof(buf))) {
    // "TID (COMM) S ...": COMM may hold spaces and parentheses; the state follows the last ')'.
    const char* close = std::strrchr(buf, ')');
    if (close != nullptr && close[1] == ' ') now.state = close[2];
  }
  if (now.state == 'S' || now.state == 'D') {
    if (read_proc(tid, "syscall", buf, sizeof(buf)) && buf[0] >= '0' && buf[0] <= '9') now.syscall = std::atol(buf);
  }
  return now;
}

std::string where_is(int id) {
  Inside in;
  if (!valid(id)) return "";
  if (thread_has_ended(id)) return "has exited";
  const ThreadNow now = thread_now(id);
  if (!now.known) return "";
  std::string out;
  if (now.state == 'S' || now.state == 'D') {
    const char* sc = syscall_name(now.syscall);
    out = sc != nullptr ? fmt::format("sleeps in {}", sc) : "sleeps in the kernel";
  } else {
    out = "runs";
  }
  static std::atomic<bool> busy{false};  // one backtrace at a time: one buffer
  if (!g_handler.load() || busy.exchange(true)) return out;
  g_frame_count.store(-1);
  const pid_t tid = g_slots[id].tid.load(std::memory_order_acquire);
  if (::syscall(SYS_tgkill, ::getpid(), tid, kWhereSignal) == 0) {
    // The thread answers at once unless no core is free for it; a message
    // without frames is still right, so the wait is short.
    for (int i = 0; i < 200 && g_frame_count.load(std::memory_order_acquire) < 0; ++i) {
      timespec ts{0, 1000000};
      real().nanosleep(&ts, nullptr);
    }
  }
  const int n = g_frame_count.load(std::memory_order_acquire);
  // Frame 0 is the handler, 1 the signal trampoline: the thread's own start at 2.
  std::string frames;
  int shown = 0;
  Dl_info self{};
  ::dladdr(reinterpret_cast<void*>(&where_is), &self);  // racelab's own library
  for (int i = 2; i < n && shown < 6; ++i) {
    void* pc = static_cast<char*>(g_frames[i]) - (i > 2 ? 1 : 0);  // a return address: the call before it
    Dl_info at{};
    // The frames below main (racelab's own start, the C library's) say nothing of the program.
    if (i > 2 && ::dladdr(pc, &at) != 0 && at.dli_fbase == self.dli_fbase) break;
    std::string name = symbol_for(pc, true);
    if (name.empty()) continue;
    frames += (frames.empty() ? "" : " <- ") + name;
    ++shown;
  }
  if (!frames.empty()) out += " in " + frames;
  busy.store(false);
  return out;
}

void prepare_thread_os() {
  struct sigaction old {};
  if (::sigaction(kWhereSignal, nullptr, &old) != 0) return;
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) return;  // the program's own: leave it
  struct sigaction sa {};
  sa.sa_handler = on_where_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(kWhereSignal, &sa, nullptr) != 0) return;
  void* warm[2];
  ::backtrace(warm, 2);  // loads libgcc's unwinder now, not inside a signal handler
  g_handler.store(true);
}

}  // namespace racelab::preload
