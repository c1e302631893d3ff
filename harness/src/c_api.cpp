// The C ABI of racelab/racelab.h: each call is racelab::point() after the name
// is made to outlive the process, which the controller's contract asks of names
// (schedules and timelines keep them by pointer).
#include <mutex>
#include <string>
#include <unordered_set>

#include "racelab/controller.h"
#include "racelab/point.h"
#include "racelab/racelab.h"

namespace {

// One copy of every name a controlled C point has used. Reached only with a
// controller attached, so the uncontrolled path never takes the lock. Leaked
// on purpose: points may run during static destruction.
const char* intern(const char* name) {
  static std::mutex* mu = new std::mutex;
  static auto* names = new std::unordered_set<std::string>;
  std::lock_guard<std::mutex> lock(*mu);
  return names->emplace(name).first->c_str();
}

inline void c_point(const char* name, const void* object, int access) {
#if RACELAB_POINTS
  racelab::Controller* controller = racelab::detail::g_controller.load(std::memory_order_relaxed);
  if (__builtin_expect(controller == nullptr, 1)) return;
  // The object and access are accepted now so that bindings need not change;
  // today's controller interface takes the name only, and a point without an
  // object is dependent on every other point, which is always sound.
  (void)object;
  (void)access;
  racelab::detail::point_slow(controller, intern(name != nullptr ? name : "racelab_point"));
#else
  (void)name;
  (void)object;
  (void)access;
#endif
}

}  // namespace

extern "C" {

int racelab_c_abi_version(void) { return RACELAB_C_ABI_VERSION; }

void racelab_point(const char* name) { c_point(name, nullptr, RACELAB_ACCESS_NONE); }

void racelab_point_access(const char* name, const void* object, int access) { c_point(name, object, access); }

int racelab_is_controlled(void) { return racelab::controller_for_this_thread() != nullptr ? 1 : 0; }

}  // extern "C"
