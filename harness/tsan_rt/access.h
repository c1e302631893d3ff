// tsan_rt/access.h -- the one hot path of racelab's ThreadSanitizer runtime:
// an access the compiler reported becomes a point of `racelab exec`, unless it
// cannot be shared.
//
// A program compiled with -fsanitize=thread calls __tsan_read4(addr) & co
// before every memory access it cannot prove thread-private (tsan_rt/*.cpp
// define them). Linked against this runtime instead of libtsan, each such call
// comes here:
//
//  1. No racelab in the process (racelab_point_access not found when the
//     runtime started): return. One load of a global and a branch.
//  2. The address is on the calling thread's stack, or in its static TLS
//     block: return. The compiler instruments TLS variables and any access
//     through a pointer it cannot see through, so both happen often; each is
//     one subtraction and compare against bounds cached per thread (the first
//     access of a thread fills them).
//  3. Otherwise the preload library's racelab_point_access(name, granule,
//     access) (harness/preload/c_api.cpp): a scheduling step when the thread is
//     controlled, a return when it is not (racelab loaded, not scheduling).
//
// What the step touches is the address's 8-byte granule, so a byte write and
// a word read of the same int are the same object to a search that reduces by
// objects (dpor, pos, surw). An access that spans granules (16 bytes, a range
// copy, an unaligned word across a boundary) touches "anything": sound, only
// less reduction.
#ifndef RACELAB_TSAN_RT_ACCESS_H_
#define RACELAB_TSAN_RT_ACCESS_H_

#include <cstddef>
#include <cstdint>

#include "racelab/racelab.h"

namespace racelab::tsan_rt {

using PointAccessFn = void (*)(const char* name, const void* object, int access);

// The preload library's racelab_point_access, or null without racelab.
extern PointAccessFn g_point_access;

// Addresses the calling thread alone uses: [lo, lo + size) each.
struct ThreadBounds {
  uintptr_t stack_lo = 0, stack_size = 0;
  uintptr_t tls_lo = 0, tls_size = 0;
  bool ready = false;
};
// initial-exec: no __tls_get_addr on the hot path, in an executable or in a
// shared library the program links.
extern thread_local ThreadBounds tl_bounds __attribute__((tls_model("initial-exec")));

// Fills tl_bounds for the calling thread (pthread_getattr_np, dl_iterate_phdr).
void fill_bounds(ThreadBounds& b);

// Finds racelab_point_access once; __tsan_init and a constructor call it.
void resolve();

inline const void* granule_of(const void* addr, size_t size) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if ((a & 7) + size > 8) return nullptr;  // spans granules: touches anything
  return reinterpret_cast<const void*>(a & ~uintptr_t{7});
}

// `name` is a string literal per kind of access ("mem.read", "atomic.rmw", ...).
inline void access(const volatile void* addr, size_t size, int kind, const char* name) {
  const PointAccessFn point = g_point_access;
  if (__builtin_expect(point == nullptr, 1)) return;
  ThreadBounds& b = tl_bounds;
  if (__builtin_expect(!b.ready, 0)) fill_bounds(b);
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (a - b.stack_lo < b.stack_size || a - b.tls_lo < b.tls_size) return;
  const void* object = granule_of(const_cast<const void*>(addr), size);
  point(name, object, object != nullptr ? kind : RACELAB_ACCESS_NONE);
}

}  // namespace racelab::tsan_rt

#endif  // RACELAB_TSAN_RT_ACCESS_H_
