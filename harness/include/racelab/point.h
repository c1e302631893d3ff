// racelab/point.h -- the interleaving point, the whole instrumentation API in one call.
//
//   racelab::point("capture.flag_set");
//   racelab::point("cache.lookup", &cache, racelab::Access::kRead);
//
// marks a place in the system under test where a thread switch changes the outcome.
//
// The second form also says what the step after the point touches: an object
// (an address, or an id made with object_id()) and whether it reads or writes
// it. Search strategies use that to tell independent steps from racing ones:
// two steps are dependent when they touch the same object and at least one of
// them writes. A point without an object is dependent on everything, so the
// plain form is always safe, only less informative. The primitives of
// racelab/sync.h fill in their own object (the mutex, the condition variable).
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
#include <cstdint>

#ifndef RACELAB_POINTS
#define RACELAB_POINTS 1
#endif

namespace racelab {

class Controller;

// How the step after a point uses its object.
enum class Access : unsigned char { kRead, kWrite };

// An object only the calling thread ever touches. A point naming it says that
// the step after it touches nothing another thread touches (only the thread's
// own data, or data guarded by a racelab lock it holds: the lock's own steps
// order those), so the step commutes with every step of every other thread.
inline const void* private_object() {
  thread_local const char mine = 0;
  return &mine;
}

// What a step that begins inside racelab rather than at a point touches
// before the thread's next point: a new thread's first step (its body up to
// its first point), a joiner's step once the thread it joined has ended
// (racelab/sync.h Thread). kAnything is the safe default: such a step is
// dependent on every other. kNothingShared promises that the first step
// touches nothing another thread touches (apart from what its creator wrote
// before creating it), or that the joiner, until its next point, touches
// nothing a thread it has not joined could touch; the step is then ordered
// only after the creation, or after the joined thread's last step.
enum class Touches : unsigned char { kAnything, kNothingShared };

// An object that is not an address (a file descriptor, a row id): any value
// that names it in this process. Ids and addresses share one space.
inline const void* object_id(unsigned long long id) { return reinterpret_cast<const void*>(static_cast<uintptr_t>(id)); }

namespace detail {
// The one global the fast path reads. Written only by attach()/detach().
extern std::atomic<Controller*> g_controller;
// Out of line so the fast path stays a load and a branch.
void point_slow(Controller* controller, const char* name);
void point_slow(Controller* controller, const char* name, const void* object, Access access);
}  // namespace detail

inline void point(const char* name) {
#if RACELAB_POINTS
  Controller* controller = detail::g_controller.load(std::memory_order_relaxed);
  if (__builtin_expect(controller != nullptr, 0)) detail::point_slow(controller, name);
#else
  (void)name;
#endif
}

inline void point(const char* name, const void* object, Access access) {
#if RACELAB_POINTS
  Controller* controller = detail::g_controller.load(std::memory_order_relaxed);
  if (__builtin_expect(controller != nullptr, 0)) detail::point_slow(controller, name, object, access);
#else
  (void)name;
  (void)object;
  (void)access;
#endif
}

}  // namespace racelab

#endif  // RACELAB_POINT_H_
