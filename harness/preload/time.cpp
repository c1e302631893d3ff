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
#include <sched.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "preload/control.h"
#include "preload/real.h"

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

// A sleep under control: logical time, whether or not the clocks are logical.
int sleep_for(int64_t ns) {
  engine([&] { g_sched->on_sleep(ns > 0 ? "sleep" : "sched_yield", ns); });
  return 0;
}

}  // namespace

void set_logical_clock(bool on, int64_t base_ns) {
  g_clock.on.store(on);
  g_clock.base_ns = base_ns;
  g_clock.reads.store(0);
}

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
  return sleep_for(req != nullptr ? to_ns(*req) : 0);
}
RACELAB_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  if (!controlled()) return real().clock_nanosleep(clock, flags, req, rem);
  if (rem != nullptr) *rem = timespec{0, 0};
  if (req == nullptr) return sleep_for(0);
  return sleep_for((flags & TIMER_ABSTIME) ? until(clock, req) : to_ns(*req));
}
RACELAB_EXPORT int usleep(useconds_t us) {
  if (!controlled()) return real().usleep(us);
  return sleep_for(static_cast<int64_t>(us) * 1000);
}
RACELAB_EXPORT unsigned sleep(unsigned s) {
  if (!controlled()) return real().sleep(s);
  sleep_for(static_cast<int64_t>(s) * kNsPerSecond);
  return 0;
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
