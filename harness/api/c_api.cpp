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
  const char* interned = intern(name != nullptr ? name : "racelab_point");
  // An object with a known access is racelab::point(name, object, access);
  // anything less is a plain point, dependent on every other, which is sound.
  if (object != nullptr && (access == RACELAB_ACCESS_READ || access == RACELAB_ACCESS_WRITE))
    racelab::detail::point_slow(controller, interned, object,
                                access == RACELAB_ACCESS_READ ? racelab::Access::kRead : racelab::Access::kWrite);
  else
    racelab::detail::point_slow(controller, interned);
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
