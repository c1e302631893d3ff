// preload/threads.cpp -- pthread_create, join, detach and exit. A thread
// created by a managed thread is managed: the scheduler gets its id before it
// exists, and it waits for its first turn before running a line of its body.
#include <pthread.h>

#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "preload/cancel.h"
#include "preload/control.h"
#include "preload/real.h"
#include "preload/thread_os.h"

namespace racelab::preload {

namespace {

struct Start {
  void* (*fn)(void*);
  void* arg;
  int id;
};

// pthread_t -> managed id, for join. Touched only inside the shim.
std::mutex g_ids_mu;
std::map<pthread_t, int>& ids() {
  static auto* m = new std::map<pthread_t, int>;
  return *m;
}


// Ends a managed thread in the scheduler: once, when its body returns or it
// calls pthread_exit.
void end_managed() {
  if (!tl.managed) return;
  const int id = tl.id;
  note_thread_ended(id);
  if (g_active.load()) engine([&] { g_sched->on_thread_end(id); });
  tl.managed = false;
  tl.id = -1;
}

void* trampoline(void* p) {
  Start s = *static_cast<Start*>(p);
  {
    Inside in;
    delete static_cast<Start*>(p);
  }
  tl.managed = true;
  tl.id = s.id;
  note_thread_started(s.id);
  engine([&] { g_sched->on_thread_start(s.id); });
  // However the body ends -- it returns, or a cancellation or pthread_exit
  // unwinds it (a forced unwind runs this frame's destructors) -- the
  // scheduler hears of it, or a thread joining it would wait for ever.
  struct EndsManaged {
    ~EndsManaged() { end_managed(); }
  } ends;
  return s.fn(s.arg);
}

}  // namespace

int managed_id_of(pthread_t t) {
  Inside in;
  std::lock_guard<std::mutex> lk(g_ids_mu);
  auto it = ids().find(t);
  return it == ids().end() ? -1 : it->second;
}

}  // namespace racelab::preload

using namespace racelab::preload;

extern "C" {

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                          void* (*fn)(void*), void* arg) {
  if (!controlled()) return real().create(thread, attr, fn, arg);
  if (g_sched->threads_seen() > racelab::kMaxThreadId) {
    // Schedules, replays and minimisation hold thread ids 0..kMaxThreadId.
    engine([&] {
      write_report(true, "error",
                   fmt::format("racelab preload: bad input: the program starts more than {} threads besides main; "
                               "racelab schedules at most {} (thread ids 0 to {})",
                               racelab::kMaxThreadId, racelab::kMaxThreadId, racelab::kMaxThreadId),
                   g_sched->steps());
    });
    ::_exit(0);
  }
  int id = -1;
  engine([&] { id = g_sched->on_thread_create(); });
  Start* s;
  {
    Inside in;
    s = new Start{fn, arg, id};
  }
  int rc = real().create(thread, attr, trampoline, s);
  if (rc != 0) {
    // The scheduler already counts a thread that will never start and would
    // wait for it: the trial cannot go on, and says why.
    engine([&] {
      write_report(true, "error", fmt::format("pthread_create failed ({}): the program cannot start thread {}",
                                              std::strerror(rc), id),
                   g_sched->steps());
    });
    ::_exit(0);
  }
  {
    Inside in;
    std::lock_guard<std::mutex> lk(g_ids_mu);
    ids()[*thread] = id;
  }
  engine([&] { g_sched->on_point("pthread_create"); });
  return 0;
}

__attribute__((visibility("default"))) int pthread_join(pthread_t thread, void** ret) {
  if (controlled()) {
    int id = managed_id_of(thread);
    if (id >= 0) {
      // A cancellation point: a cancel acts on entry, and ends the wait
      // (Scheduler::interrupt) of a joiner cancelled while it waits.
      do {
        cancel_point();
        engine([&] { g_sched->on_join(id); });  // a deadlock message names joins itself
        cancel_point();
      } while (!thread_has_ended(id));
      // Ended in the scheduler; the OS thread may take a moment more to end.
      KnownWait known(tl.id);
      return real().join(thread, ret);
    }
  }
  return real().join(thread, ret);
}

namespace {
// pthread_timedjoin_np / clockjoin_np / tryjoin_np: the join ends when the
// thread ends, or ETIMEDOUT when `deadline` passes in logical time (EBUSY for
// the try, which is a point and no wait).
int join_until(pthread_t thread, void** ret, clockid_t clock, const struct timespec* abstime, bool try_only) {
  const int id = managed_id_of(thread);
  const int64_t deadline = try_only ? 0 : logical_deadline(clock, abstime);
  if (deadline < 0) return EINVAL;
  do {
    if (!try_only) cancel_point();  // a cancellation point, as pthread_join
    bool ended = true;
    engine([&] { ended = g_sched->on_join_until(id, try_only ? "pthread_tryjoin_np" : "pthread_timedjoin_np", deadline); });
    if (!try_only) cancel_point();
    if (!ended) return try_only ? EBUSY : ETIMEDOUT;
  } while (!thread_has_ended(id));  // woken by a cancel that is not acted on yet: wait on
  KnownWait known(tl.id);
  return real().join(thread, ret);
}
}  // namespace

__attribute__((visibility("default"))) int pthread_timedjoin_np(pthread_t thread, void** ret,
                                                                const struct timespec* abstime) {
  if (controlled() && managed_id_of(thread) >= 0) return join_until(thread, ret, CLOCK_REALTIME, abstime, false);
  return real().timedjoin(thread, ret, abstime);
}

__attribute__((visibility("default"))) int pthread_clockjoin_np(pthread_t thread, void** ret, clockid_t clock,
                                                                const struct timespec* abstime) {
  if (controlled() && managed_id_of(thread) >= 0) return join_until(thread, ret, clock, abstime, false);
  return real().clockjoin(thread, ret, clock, abstime);
}

__attribute__((visibility("default"))) int pthread_tryjoin_np(pthread_t thread, void** ret) {
  if (controlled() && managed_id_of(thread) >= 0) return join_until(thread, ret, CLOCK_REALTIME, nullptr, true);
  return real().tryjoin(thread, ret);
}

__attribute__((visibility("default"))) int pthread_detach(pthread_t thread) { return real().detach(thread); }

__attribute__((visibility("default"))) void pthread_exit(void* ret) {
  end_managed();
  real().exit(ret);
  __builtin_unreachable();
}

}  // extern "C"
