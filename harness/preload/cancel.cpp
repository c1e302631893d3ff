// preload/cancel.cpp -- pthread_cancel, pthread_testcancel and the cancel
// state under control (preload/cancel.h).
#include "preload/cancel.h"

#include <pthread.h>

#include <atomic>

#include <fmt/format.h>

#include "engine/trial.h"
#include "preload/control.h"
#include "preload/real.h"

namespace racelab::preload {

namespace {

// Per managed thread: a cancel was requested, and whether its cancel state
// is disabled (pthread_setcancelstate). A trial process is forked afresh for
// every trial, so these start clear.
struct CancelState {
  std::atomic<bool> requested{false};
  std::atomic<bool> disabled{false};
};
CancelState g_cancel[kMaxThreadId + 1];

bool valid(int id) { return id >= 0 && id <= kMaxThreadId; }

}  // namespace

void cancel_point() {
  if (!tl.managed || !valid(tl.id) || !g_cancel[tl.id].requested.load(std::memory_order_acquire)) return;
  // The C library knows of the cancel (pthread_cancel passed it on) and acts
  // on it here unless the thread disabled cancellation: it unwinds, running
  // the cleanup handlers, and the thread ends as PTHREAD_CANCELED.
  real().testcancel();
}

}  // namespace racelab::preload

using namespace racelab::preload;

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

RACELAB_EXPORT int pthread_cancel(pthread_t thread) {
  if (!controlled()) return real().cancel(thread);
  const int target = managed_id_of(thread);
  const int me = tl.id;
  engine([&] { g_sched->on_point("pthread_cancel"); });
  const int rc = real().cancel(thread);
  if (rc != 0 || (!valid(target) && !pthread_equal(thread, pthread_self()))) return rc;
  const int id = valid(target) ? target : me;
  g_cancel[id].requested.store(true, std::memory_order_release);
  // A target waiting in the scheduler goes on to its cancellation point. One
  // with cancellation disabled keeps waiting, as it would natively; it acts
  // at its next cancellation point after it enables it.
  if (id != me && !g_cancel[id].disabled.load(std::memory_order_acquire))
    engine([&] { g_sched->interrupt(id); });
  return 0;
}

RACELAB_EXPORT void pthread_testcancel() {
  if (!controlled()) return real().testcancel();
  engine([&] { g_sched->on_point("pthread_testcancel"); });
  cancel_point();
}

RACELAB_EXPORT int pthread_setcancelstate(int state, int* old) {
  const int rc = real().setcancelstate(state, old);
  if (rc == 0 && tl.managed && valid(tl.id))
    g_cancel[tl.id].disabled.store(state == PTHREAD_CANCEL_DISABLE, std::memory_order_release);
  return rc;
}

RACELAB_EXPORT int pthread_setcanceltype(int type, int* old) {
  if (controlled() && type == PTHREAD_CANCEL_ASYNCHRONOUS) {
    engine([&] {
      write_report(true, "error",
                   fmt::format("racelab preload: bad input: thread {} asks for asynchronous cancellation "
                               "(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS)), which racelab does not support: "
                               "a cancel could then unwind the thread anywhere, racelab's scheduler included. "
                               "Deferred cancellation (the default) is supported",
                               tl.id),
                   g_sched->steps());
    });
    ::_exit(0);
  }
  return real().setcanceltype(type, old);
}
