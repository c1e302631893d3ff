// preload/c_api.cpp -- racelab/racelab.h, exported by the preload library.
//
// A program under `racelab exec` that marks its own points -- racelab_point()
// from C, through dlsym or a weak symbol, or the op-level points of
// libracelab_op_points_preload.so preloaded beside this library -- gets them
// as scheduling steps of the same engine as its pthread calls. So a bug that
// needs a thread switch between two plain accesses, with no lock call between
// them, is reachable once the program names the place. Outside a controlled
// trial (no trial, a thread racelab does not manage, the shim's own work) a
// point does nothing, as with no controller attached.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

#include "preload/control.h"
#include "racelab/racelab.h"

namespace racelab::preload {
namespace {

// Names live as long as the process (schedules keep them by pointer); an FFI's
// temporary string is copied once. Called inside the shim: the lock is the C
// library's, not a step.
const char* intern_slow(const char* name) {
  static std::mutex* mu = new std::mutex;
  static auto* names = new std::unordered_set<std::string>;
  std::lock_guard<std::mutex> lock(*mu);
  return names->emplace(name).first->c_str();
}

// A memory-access point calls in at every shared access, nearly always with
// the same few literal names: a small per-thread cache by pointer spares the
// lock, the hash and the string. A hit is checked by content, so a temporary
// buffer reused for another name is never mistaken for the one cached.
struct InternCache {
  const char* from[8] = {};
  const char* to[8] = {};
};
thread_local InternCache tl_intern __attribute__((tls_model("initial-exec")));

const char* intern(const char* name) {
  if (name == nullptr) name = "racelab_point";
  const size_t slot = (reinterpret_cast<uintptr_t>(name) >> 3) & 7;
  InternCache& c = tl_intern;
  if (c.from[slot] == name && std::strcmp(c.to[slot], name) == 0) return c.to[slot];
  const char* interned = intern_slow(name);
  c.from[slot] = name;
  c.to[slot] = interned;
  return interned;
}

void point(const char* name, const void* object, int access) {
  if (!controlled()) return;
  engine([&] {
    const char* interned = intern(name);
    // As racelab::point(name, object, access): a known access to an object is
    // an access step; anything less is a plain point, dependent on every other.
    if (object != nullptr && (access == RACELAB_ACCESS_READ || access == RACELAB_ACCESS_WRITE))
      g_sched->on_access(interned, object, access == RACELAB_ACCESS_READ ? Access::kRead : Access::kWrite);
    else
      g_sched->on_point(interned);
  });
}

}  // namespace
}  // namespace racelab::preload

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

RACELAB_EXPORT int racelab_c_abi_version(void) { return RACELAB_C_ABI_VERSION; }

RACELAB_EXPORT void racelab_point(const char* name) { racelab::preload::point(name, nullptr, RACELAB_ACCESS_NONE); }

RACELAB_EXPORT void racelab_point_access(const char* name, const void* object, int access) {
  racelab::preload::point(name, object, access);
}

RACELAB_EXPORT int racelab_is_controlled(void) { return racelab::preload::controlled() ? 1 : 0; }
