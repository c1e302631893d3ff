// preload/signals.cpp -- alarm, setitimer and timer_create on logical time
// (preload/signals.h).
#include "preload/signals.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <mutex>

#include "preload/control.h"
#include "preload/real.h"
#include "preload/unseen.h"

namespace racelab::preload {

std::atomic<bool> g_timers_armed{false};

namespace {

constexpr int64_t kNsPerSecond = 1000000000;
constexpr int kTimers = 32;

struct Timer {
  bool used = false;
  bool armed = false;
  bool posix = false;      // timer_create's (else ITIMER_REAL's)
  int64_t due_ns = 0;      // on Scheduler::now_ns
  int64_t period_ns = 0;   // 0: once
  int signo = SIGALRM;     // 0: SIGEV_NONE
  sigval value{};
  clockid_t clock = CLOCK_REALTIME;
  int overrun = 0;         // expirations past the one that fired, at the last firing
};

struct Timers {
  std::mutex mu;  // taken inside the shim only
  Timer itimer;   // ITIMER_REAL: alarm and setitimer
  Timer posix[kTimers];
};
Timers& timers() {
  static auto* t = new Timers;  // never destroyed: the process may exit with threads parked
  return *t;
}

thread_local uint64_t tl_handlers_run __attribute__((tls_model("initial-exec"))) = 0;

// Timers are logical in a controlled trial whose time is logical; the
// program's own call (not the shim's).
bool logical() {
  return g_active.load(std::memory_order_relaxed) && g_sched != nullptr && !real_time() && tl.depth == 0;
}

int64_t now_ns() {
  Inside in;
  return g_sched->now_ns();
}

int64_t ns_of(const timeval& tv) { return static_cast<int64_t>(tv.tv_sec) * kNsPerSecond + tv.tv_usec * 1000; }
int64_t ns_of(const timespec& ts) { return static_cast<int64_t>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec; }
timeval timeval_of(int64_t ns) {
  return timeval{static_cast<time_t>(ns / kNsPerSecond), static_cast<suseconds_t>(ns % kNsPerSecond / 1000)};
}
timespec timespec_of(int64_t ns) { return timespec{static_cast<time_t>(ns / kNsPerSecond), static_cast<long>(ns % kNsPerSecond)}; }

// Left until `t` fires (0 when disarmed), under mu.
int64_t left_ns(const Timer& t, int64_t now) { return t.armed ? std::max<int64_t>(t.due_ns - now, 1) : 0; }

// Under mu: whether any timer is armed now, for the engine's quick check.
void update_armed(Timers& ts) {
  bool any = ts.itimer.armed;
  for (const Timer& t : ts.posix) any = any || t.armed;
  g_timers_armed.store(any, std::memory_order_release);
}

void arm(Timer& t, int64_t value_ns, int64_t period_ns, int64_t now) {
  t.armed = value_ns > 0;
  t.due_ns = now + value_ns;
  t.period_ns = t.armed ? std::max<int64_t>(period_ns, 0) : 0;
  t.overrun = 0;
}

Timer* posix_timer(timer_t id) {
  Timers& ts = timers();
  for (Timer& t : ts.posix)
    if (id == static_cast<timer_t>(&t)) return t.used ? &t : nullptr;
  return nullptr;
}

// f(timers, timer) under the timers' lock, for the program's timer `id`;
// -1 with errno EINVAL when it has no such timer.
template <class F>
int with_posix_timer(timer_t id, F f) {
  Inside in;
  Timers& ts = timers();
  std::lock_guard<std::mutex> lk(ts.mu);
  Timer* t = posix_timer(id);
  if (t == nullptr) {
    errno = EINVAL;
    return -1;
  }
  return f(ts, *t);
}

bool is_ours(timer_t id) {
  Timers& ts = timers();
  const void* p = id;
  return p >= static_cast<const void*>(&ts.posix[0]) && p < static_cast<const void*>(&ts.posix[kTimers]);
}

bool logical_clock(clockid_t clock) {
  return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME;
}

// Raises `signo` as a fired timer: on this thread when it would take it, so
// its handler runs at this step; else to the process.
void raise_timer_signal(const Timer& t) {
  if (t.signo == 0) return;
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  const bool here = sigismember(&mask, t.signo) == 0;
  struct sigaction sa {};
  sigaction(t.signo, nullptr, &sa);
  const bool handler = (sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != nullptr
                                                   : sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
  const pid_t pid = ::getpid();
  const pid_t tid = static_cast<pid_t>(real().syscall(SYS_gettid, 0, 0, 0, 0, 0, 0));
  if (t.posix) {
    // As the kernel's timer would: SI_TIMER, the timer's value and overrun.
    siginfo_t info{};
    info.si_signo = t.signo;
    info.si_code = SI_TIMER;
    info.si_value = t.value;
    info.si_overrun = t.overrun;
    if (here)
      real().syscall(SYS_rt_tgsigqueueinfo, pid, tid, t.signo, reinterpret_cast<long>(&info), 0, 0);
    else
      real().syscall(SYS_rt_sigqueueinfo, pid, t.signo, reinterpret_cast<long>(&info), 0, 0, 0);
  } else if (here) {
    real().syscall(SYS_tgkill, pid, tid, t.signo, 0, 0, 0);
  } else {
    ::kill(pid, t.signo);
  }
  // Delivered on the way out of the system call above, when it was sent here.
  if (here && handler) ++tl_handlers_run;
}

}  // namespace

uint64_t handlers_run_here() { return tl_handlers_run; }

int64_t timer_due_in_ns() {
  if (!g_timers_armed.load(std::memory_order_acquire) || !logical()) return INT64_MAX;
  const int64_t now = now_ns();
  Inside in;
  Timers& ts = timers();
  std::lock_guard<std::mutex> lk(ts.mu);
  int64_t first = ts.itimer.armed ? ts.itimer.due_ns : INT64_MAX;
  for (const Timer& t : ts.posix)
    if (t.armed) first = std::min(first, t.due_ns);
  return first == INT64_MAX ? INT64_MAX : std::max<int64_t>(first - now, 0);
}

void fire_due_timers() {
  // Only the running managed thread, at a step of its own (not one ending).
  if (!g_active.load(std::memory_order_relaxed) || !tl.managed || tl.depth != 0 || !logical() ||
      g_sched->current() != tl.id)
    return;
  const int64_t now = now_ns();
  Timer fired[kTimers + 1];
  int n = 0;
  {
    Inside in;
    Timers& ts = timers();
    std::lock_guard<std::mutex> lk(ts.mu);
    auto expire = [&](Timer& t) {
      if (!t.armed || t.due_ns > now) return;
      if (t.period_ns > 0) {
        const int64_t late = (now - t.due_ns) / t.period_ns;  // periods that passed unseen
        t.overrun = static_cast<int>(std::min<int64_t>(late, INT_MAX));
        t.due_ns += (late + 1) * t.period_ns;
      } else {
        t.overrun = 0;
        t.armed = false;
      }
      fired[n++] = t;
    };
    expire(ts.itimer);
    for (Timer& t : ts.posix) expire(t);
    update_armed(ts);
  }
  for (int i = 0; i < n; ++i) raise_timer_signal(fired[i]);
}

}  // namespace racelab::preload

using namespace racelab::preload;

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

RACELAB_EXPORT int setitimer(int which, const struct itimerval* value, struct itimerval* old) noexcept {
  if (which != ITIMER_REAL || !logical()) return real().setitimer(which, value, old);
  if (value != nullptr && (value->it_value.tv_usec < 0 || value->it_value.tv_usec >= 1000000 ||
                           value->it_interval.tv_usec < 0 || value->it_interval.tv_usec >= 1000000)) {
    errno = EINVAL;
    return -1;
  }
  const int64_t now = now_ns();
  Inside in;
  Timers& ts = timers();
  std::lock_guard<std::mutex> lk(ts.mu);
  Timer& t = ts.itimer;
  if (old != nullptr) {
    old->it_value = timeval_of(left_ns(t, now));
    old->it_interval = timeval_of(t.period_ns);
  }
  if (value != nullptr) {
    t.used = true;
    t.posix = false;
    t.signo = SIGALRM;
    arm(t, ns_of(value->it_value), ns_of(value->it_interval), now);
  }
  update_armed(ts);
  return 0;
}

RACELAB_EXPORT int getitimer(int which, struct itimerval* value) noexcept {
  if (which != ITIMER_REAL || !logical()) return real().getitimer(which, value);
  const int64_t now = now_ns();
  Inside in;
  Timers& ts = timers();
  std::lock_guard<std::mutex> lk(ts.mu);
  value->it_value = timeval_of(left_ns(ts.itimer, now));
  value->it_interval = timeval_of(ts.itimer.period_ns);
  return 0;
}

// glibc's alarm: setitimer, and the seconds left of the last one rounded to
// the nearest (never 0 while it is still armed).
RACELAB_EXPORT unsigned alarm(unsigned seconds) noexcept {
  if (!logical()) return real().alarm(seconds);
  itimerval value{}, old{};
  value.it_value.tv_sec = seconds;
  setitimer(ITIMER_REAL, &value, &old);
  unsigned left = static_cast<unsigned>(old.it_value.tv_sec);
  if (old.it_value.tv_usec >= 500000 || (left == 0 && old.it_value.tv_usec > 0)) ++left;
  return left;
}

RACELAB_EXPORT int timer_create(clockid_t clock, struct sigevent* sev, timer_t* id) noexcept {
  if (!logical()) return real().timer_create(clock, sev, id);
  const int notify = sev != nullptr ? sev->sigev_notify : SIGEV_SIGNAL;
  if (!logical_clock(clock) || (notify != SIGEV_SIGNAL && notify != SIGEV_NONE)) {
    // A thread of the C library's (SIGEV_THREAD), a signal to one thread, a CPU-time clock: the real timer.
    note_unseen(notify == SIGEV_THREAD ? "timer_create(SIGEV_THREAD)" : "timer_create (a kind racelab does not keep)");
    return real().timer_create(clock, sev, id);
  }
  if (notify == SIGEV_SIGNAL && sev != nullptr && (sev->sigev_signo <= 0 || sev->sigev_signo >= NSIG)) {
    errno = EINVAL;
    return -1;
  }
  Inside in;
  Timers& ts = timers();
  std::lock_guard<std::mutex> lk(ts.mu);
  for (Timer& t : ts.posix) {
    if (t.used) continue;
    t = Timer{};
    t.used = true;
    t.posix = true;
    t.clock = clock;
    t.signo = notify == SIGEV_NONE ? 0 : sev != nullptr ? sev->sigev_signo : SIGALRM;
    if (sev != nullptr) {
      t.value = sev->sigev_value;
    } else {
      t.value.sival_ptr = &t;  // POSIX: the timer's id
    }
    *id = static_cast<timer_t>(&t);
    return 0;
  }
  errno = EAGAIN;  // as the kernel says when a process has too many timers
  return -1;
}

RACELAB_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec* value, struct itimerspec* old) noexcept {
  if (!is_ours(id)) return real().timer_settime(id, flags, value, old);
  if (value == nullptr || value->it_value.tv_nsec < 0 || value->it_value.tv_nsec >= kNsPerSecond ||
      value->it_interval.tv_nsec < 0 || value->it_interval.tv_nsec >= kNsPerSecond) {
    errno = EINVAL;
    return -1;
  }
  int64_t value_ns = ns_of(value->it_value);
  clockid_t clock = CLOCK_REALTIME;
  if (with_posix_timer(id, [&](Timers&, Timer& t) { return clock = t.clock, 0; }) != 0) return -1;
  if ((flags & TIMER_ABSTIME) && value_ns > 0) {
    // An absolute deadline on the timer's clock, as the program reads that clock (logical, preload/time.cpp).
    timespec now{};
    clock_gettime(clock, &now);
    value_ns = std::max<int64_t>(value_ns - ns_of(now), 1);
  }
  const int64_t now = now_ns();
  return with_posix_timer(id, [&](Timers& ts, Timer& t) {
    if (old != nullptr) {
      old->it_value = timespec_of(left_ns(t, now));
      old->it_interval = timespec_of(t.period_ns);
    }
    arm(t, value_ns, ns_of(value->it_interval), now);
    update_armed(ts);
    return 0;
  });
}

RACELAB_EXPORT int timer_gettime(timer_t id, struct itimerspec* value) noexcept {
  if (!is_ours(id)) return real().timer_gettime(id, value);
  const int64_t now = g_sched != nullptr ? now_ns() : 0;
  return with_posix_timer(id, [&](Timers&, Timer& t) {
    value->it_value = timespec_of(left_ns(t, now));
    value->it_interval = timespec_of(t.period_ns);
    return 0;
  });
}

RACELAB_EXPORT int timer_getoverrun(timer_t id) noexcept {
  if (!is_ours(id)) return real().timer_getoverrun(id);
  return with_posix_timer(id, [](Timers&, Timer& t) { return t.overrun; });
}

RACELAB_EXPORT int timer_delete(timer_t id) noexcept {
  if (!is_ours(id)) return real().timer_delete(id);
  return with_posix_timer(id, [](Timers& ts, Timer& t) {
    t = Timer{};
    update_armed(ts);
    return 0;
  });
}
