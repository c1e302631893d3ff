// preload/time.cpp -- sched_yield and sleeps. Under control they are steps at
// which the caller steps aside (Scheduler::on_yield) and no time passes: a
// managed thread sleeps to let others run, and under control the others run
// when it steps aside. So `while (!ready) usleep(100);` makes progress under
// every strategy, the non-preemptive default included.
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "preload/control.h"
#include "preload/real.h"

using namespace racelab::preload;

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
int step_aside(const char* point) {
  engine([&] { g_sched->on_yield(point); });
  return 0;
}
}  // namespace

RACELAB_EXPORT int sched_yield() {
  if (!controlled()) return real().sched_yield();
  return step_aside("sched_yield");
}
RACELAB_EXPORT int nanosleep(const struct timespec* req, struct timespec* rem) {
  if (!controlled()) return real().nanosleep(req, rem);
  if (rem != nullptr) *rem = timespec{0, 0};
  return step_aside("sleep");
}
RACELAB_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
  if (!controlled()) return real().clock_nanosleep(clock, flags, req, rem);
  if (rem != nullptr) *rem = timespec{0, 0};
  return step_aside("sleep");
}
RACELAB_EXPORT int usleep(useconds_t us) {
  if (!controlled()) return real().usleep(us);
  return step_aside("sleep");
}
RACELAB_EXPORT unsigned sleep(unsigned s) {
  if (!controlled()) return real().sleep(s);
  step_aside("sleep");
  return 0;
}
