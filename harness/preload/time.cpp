// preload/time.cpp -- time under control: sleeps, yields and the clocks.
//
// Under control no real time passes in a sleep: sched_yield (and a sleep of
// 0) is a step at which the caller steps aside (Scheduler::on_yield), and a
// sleep makes the caller wait for that much of the scheduler's logical time
// (Scheduler::on_sleep) while the others run -- time that passes with their
// steps, or at once when nothing else can run. So `while (!ready) usleep(100);`
// makes progress under every strategy, and a thread that sleeps a second
// between polls lets the others do a second's worth of steps first.
//
// The clocks are logical (unless the trial asks for real time): time(),
// gettimeofday(), timespec_get() and clock_gettime() -- REALTIME, MONOTONIC,
// BOOTTIME and their COARSE/RAW forms, and the process and thread CPU clocks --
// read the scheduler's logical time from the trial's recorded base (the real
// time of the first trial, kept in the schedule), plus a little per read. So a program whose control flow reads the clock (a log
// line's timestamp, a timeout, a backoff) takes the same path when its
// schedule is replayed, on any machine at any load. Reads by the shim itself
// (its watchdog) see the real clocks.
#include <errno.h>
#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>

#include "preload/cancel.h"
#include "preload/control.h"
#include "preload/real.h"
#include "preload/signals.h"
#include "preload/thread_os.h"
#include "preload/unseen.h"

using namespace racelab::preload;

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

namespace racelab::preload {

namespace {

constexpr int64_t kNsPerSecond = 1000000000;
constexpr int64_t kReadNs = 1000;           // a clock read: 1 us, so a loop that only reads the clock ends
constexpr int64_t kMonotonicStartNs = 1000 * kNsPerSecond;  // MONOTONIC and BOOTTIME start here (the machine "booted" 1000 s ago)

struct LogicalClock {
  std::atomic<bool> on{false};
  int64_t base_ns = 0;  // REALTIME at the trial's start
  std::atomic<int64_t> reads{0};
};
LogicalClock g_clock;

// The scheduler's logical time (Scheduler::now_ns) plus the reads so far; each read moves it on.
int64_t elapsed_ns(bool count_read) {
  Inside in;  // the scheduler's own lock is not a step of the program's
  const int64_t reads = count_read ? g_clock.reads.fetch_add(1, std::memory_order_relaxed) + 1 : g_clock.reads.load();
  return (g_sched != nullptr ? g_sched->now_ns() : 0) + reads * kReadNs;
}

bool logical() { return g_clock.on.load(std::memory_order_relaxed) && g_active.load(std::memory_order_relaxed) && tl.depth == 0; }

// clock -> the logical clock's start for it; false: a clock kept real (another thread's CPU clock, a file descriptor's clock).
bool start_of(clockid_t clock, int64_t* start) {
  switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_TAI:
      *start = g_clock.base_ns;
      return true;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_BOOTTIME:
      *start = kMonotonicStartNs;
      return true;
    case CLOCK_PROCESS_CPUTIME_ID:
    case CLOCK_THREAD_CPUTIME_ID:
      *start = 0;
      return true;
    default:
      return false;
  }
}

timespec to_timespec(int64_t ns) { return timespec{static_cast<time_t>(ns / kNsPerSecond), static_cast<long>(ns % kNsPerSecond)}; }
int64_t to_ns(const timespec& ts) { return static_cast<int64_t>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec; }

int64_t logical_now(clockid_t clock) {
  int64_t start = 0;
  start_of(clock, &start);
  return start + elapsed_ns(true);
}

int step_aside(const char* point) {
  engine([&] { g_sched->on_yield(point); });
  return 0;
}

std::atomic<bool> g_real_time{false};

int64_t sched_now_ns() {
  Inside in;
  return g_sched->now_ns();
}

int64_t real_now_ns() {
  timespec ts{};
  real().clock_gettime(CLOCK_MONOTONIC, &ts);
  return to_ns(ts);
}

// A sleep under control, a cancellation point (preload/cancel.h). Its time
// is logical: the others run meanwhile, or time jumps when nothing else can.
// A logical timer due before its end (preload/signals.h) fires first; when a
// handler ran on this thread the sleep ends early: EINTR, with the time left
// in *left_ns. With --real-time the sleep also lasts its real time, all of it
// on this thread's turn (one thread runs at a time), and a real signal may
// cut it short.
int sleep_for(int64_t ns, int64_t* left_ns = nullptr) {
  if (left_ns != nullptr) *left_ns = 0;
  cancel_point();
  if (real_time()) {
    const int64_t until = real_now_ns() + ns;
    engine([&] { g_sched->on_sleep(ns > 0 ? "sleep" : "sched_yield", ns); });
    cancel_point();
    int64_t rest = until - real_now_ns();
    if (rest <= 0) return 0;
    KnownWait known(tl.id);  // a sleep the shim makes on purpose: not an uncontrolled wait
    timespec req = to_timespec(rest), rem{};
    if (real().nanosleep(&req, &rem) != 0 && errno == EINTR) {
      if (left_ns != nullptr) *left_ns = to_ns(rem);
      return EINTR;
    }
    return 0;
  }
  const int64_t end = sched_now_ns() + std::max<int64_t>(ns, 0);
  for (bool first = true;; first = false) {
    const int64_t left = end - sched_now_ns();
    if (left <= 0 && !first) return 0;
    const int64_t due = timer_due_in_ns();
    const int64_t part = std::max<int64_t>(std::min(left, due), 0);
    const uint64_t handled = handlers_run_here();
    engine([&] { g_sched->on_sleep(part > 0 ? "sleep" : "sched_yield", part); });
    cancel_point();
    if (handlers_run_here() != handled) {
      if (left_ns != nullptr) *left_ns = std::max<int64_t>(end - sched_now_ns(), 0);
      return part < left ? EINTR : 0;  // a sleep that ran its full time is not cut short
    }
    if (part >= left) return 0;
  }
}

}  // namespace

void set_logical_clock(bool on, int64_t base_ns) {
  g_clock.on.store(on);
  g_clock.base_ns = base_ns;
  g_clock.reads.store(0);
}

void set_real_time(bool on) { g_real_time.store(on); }
bool real_time() { return g_real_time.load(std::memory_order_relaxed); }

int64_t logical_deadline(clockid_t clock, const timespec* deadline) {
  if (deadline == nullptr) return INT64_MAX;
  if (deadline->tv_nsec < 0 || deadline->tv_nsec >= kNsPerSecond || deadline->tv_sec < 0) return -1;
  if (deadline->tv_sec >= INT64_MAX / kNsPerSecond - 1) return INT64_MAX;
  int64_t start = 0;
  if (logical() && start_of(clock, &start)) {
    const int64_t reads = g_clock.reads.load() * kReadNs;
    return std::max<int64_t>(to_ns(*deadline) - start - reads, 0);
  }
  // Real clocks (--real-time, or a clock kept real): the time left on it, from logical now.
  timespec now{};
  real().clock_gettime(clock, &now);
  const int64_t left = to_ns(*deadline) - to_ns(now);
  Inside in;
  const int64_t logical_now = g_sched != nullptr ? g_sched->now_ns() : 0;
  return left <= 0 ? logical_now : logical_now + left;
}

namespace {
// How long until `deadline` on `clock`, for clock_nanosleep(TIMER_ABSTIME):
// on the logical clock when the clocks are logical, else on the real one.
int64_t until(clockid_t clock, const timespec* deadline) {
  int64_t start = 0;
  if (logical() && start_of(clock, &start)) return to_ns(*deadline) - start - elapsed_ns(false);
  timespec now{};
  real().clock_gettime(clock, &now);
  return to_ns(*deadline) - to_ns(now);
}
}  // namespace

}  // namespace racelab::preload

RACELAB_EXPORT int sched_yield() {
  if (!controlled()) return real().sched_yield();
  return step_aside("sched_yield");
}
// C11's yield: glibc's calls sched_yield inside the library, where the shim
// cannot see it. (pthread_yield is sched_yield by name in glibc's header.)
RACELAB_EXPORT void thrd_yield() { sched_yield(); }
RACELAB_EXPORT int nanosleep(const struct timespec* req, struct timespec* rem) {
  if (!controlled()) return real().nanosleep(req, rem);
  if (rem != nullptr) *rem = timespec{0, 0};
  if (req != nullptr && (req->tv_nsec < 0 || req->tv_nsec >= kNsPerSecond || req->tv_sec < 0)) {
    errno = EINVAL;
    return -1;
  }
  int64_t left = 0;
  if (sleep_for(req != nullptr ? to_ns(*req) : 0, &left) == EINTR) {
    if (rem != nullptr) *rem = to_timespec(left);
    errno = EINTR;
    return -1;
  }
  return 0;
}
RACELAB_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  if (!controlled()) return real().clock_nanosleep(clock, flags, req, rem);
  if (rem != nullptr) *rem = timespec{0, 0};
  if (req == nullptr) return sleep_for(0);
  int64_t left = 0;
  const int rc = sleep_for((flags & TIMER_ABSTIME) ? until(clock, req) : to_ns(*req), &left);
  // An absolute sleep reports no time left (POSIX): it is restarted with the same deadline.
  if (rc == EINTR && rem != nullptr && !(flags & TIMER_ABSTIME)) *rem = to_timespec(left);
  return rc;
}
RACELAB_EXPORT int usleep(useconds_t us) {
  if (!controlled()) return real().usleep(us);
  if (sleep_for(static_cast<int64_t>(us) * 1000) == EINTR) {
    errno = EINTR;
    return -1;
  }
  return 0;
}
RACELAB_EXPORT unsigned sleep(unsigned s) {
  if (!controlled()) return real().sleep(s);
  int64_t left = 0;
  if (sleep_for(static_cast<int64_t>(s) * kNsPerSecond, &left) == EINTR)
    return static_cast<unsigned>((left + kNsPerSecond - 1) / kNsPerSecond);  // the seconds left, rounded up
  return 0;
}
// pause: a wait for a signal. Under logical time a signal from a timer
// (preload/signals.h) is the one racelab can see coming: the thread sleeps
// until the first timer fires and returns when a handler ran. With no timer
// armed the signal can only come from elsewhere (another thread's kill):
// the real pause, counted as a wait racelab does not see (preload/unseen.h).
RACELAB_EXPORT int pause() {
  if (!controlled()) return real().pause();
  cancel_point();
  for (;;) {
    const int64_t due = timer_due_in_ns();
    if (due == INT64_MAX || real_time()) {
      note_unseen("pause (no timer armed)");
      return real().pause();
    }
    const uint64_t handled = handlers_run_here();
    int64_t left = 0;
    sleep_for(due, &left);
    if (handlers_run_here() != handled) {
      errno = EINTR;
      return -1;
    }
  }
}

// --- the clocks ---
RACELAB_EXPORT int clock_gettime(clockid_t clock, struct timespec* ts) {
  int64_t start = 0;
  if (!logical() || !start_of(clock, &start)) return real().clock_gettime(clock, ts);
  *ts = to_timespec(start + elapsed_ns(true));
  return 0;
}
RACELAB_EXPORT int gettimeofday(struct timeval* tv, void* tz) {
  if (!logical()) return real().gettimeofday(tv, tz);
  const int64_t ns = logical_now(CLOCK_REALTIME);
  tv->tv_sec = static_cast<time_t>(ns / kNsPerSecond);
  tv->tv_usec = static_cast<suseconds_t>(ns % kNsPerSecond / 1000);
  return 0;
}
RACELAB_EXPORT time_t time(time_t* out) {
  if (!logical()) return real().time(out);
  const time_t t = static_cast<time_t>(logical_now(CLOCK_REALTIME) / kNsPerSecond);
  if (out != nullptr) *out = t;
  return t;
}
RACELAB_EXPORT int timespec_get(struct timespec* ts, int base) {
  if (!logical() || base != TIME_UTC) return real().timespec_get(ts, base);
  *ts = to_timespec(logical_now(CLOCK_REALTIME));
  return base;
}
