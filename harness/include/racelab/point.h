// racelab/point.h -- the interleaving point, the whole instrumentation API in one call.
//
//   racelab::point("capture.flag_set");
//
// marks a place in the system under test where a thread switch changes the outcome.
//
// With no controller attached the call costs one relaxed atomic load and a
// not-taken branch (measured by `racelab bench`). With a controller attached the
// calling thread may be paused here while the controller's strategy lets another
// managed thread run. Names must be string literals (or otherwise outlive the
// process): they are stored by pointer and appear in schedules and reports.
//
// Building with RACELAB_POINTS=0 compiles points out entirely; the benchmark uses
// that build as the zero-cost baseline.
#ifndef RACELAB_POINT_H_
#define RACELAB_POINT_H_

#include <atomic>

#ifndef RACELAB_POINTS
#define RACELAB_POINTS 1
#endif

namespace racelab {

class Controller;

namespace detail {
// The one global the fast path reads. Written only by attach()/detach().
extern std::atomic<Controller*> g_controller;
// Out of line so the fast path stays a load and a branch.
void point_slow(Controller* controller, const char* name);
}  // namespace detail

inline void point(const char* name) {
#if RACELAB_POINTS
  Controller* controller = detail::g_controller.load(std::memory_order_relaxed);
  if (__builtin_expect(controller != nullptr, 0)) detail::point_slow(controller, name);
#else
  (void)name;
#endif
}

}  // namespace racelab

#endif  // RACELAB_POINT_H_
