// tsan_rt/runtime.cpp -- the plain accesses of the ThreadSanitizer ABI that
// gcc and clang emit under -fsanitize=thread, as racelab points (access.h);
// the atomics are in atomics.cpp and atomic128.cpp.
//
// This replaces libtsan: nothing here detects races. It only turns the places
// the compiler marked into points where `racelab exec` may switch threads, so
// an interleaving inside code with no pthread call (a lost update on a plain
// int) becomes reachable. Function entry and exit are not points: they cost
// one empty call each.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include "tsan_rt/access.h"
#include "tsan_rt/tsan_abi.h"

namespace racelab::tsan_rt {

PointAccessFn g_point_access = nullptr;
thread_local ThreadBounds tl_bounds __attribute__((tls_model("initial-exec")));

void resolve() {
  static bool done = false;
  if (done) return;
  done = true;
  // The preload library comes first in the global scope, so this is its
  // definition even if the program also links racelab::point's C ABI.
  g_point_access = reinterpret_cast<PointAccessFn>(dlsym(RTLD_DEFAULT, "racelab_point_access"));
}

namespace {

// Static TLS of every module loaded at start lies just below the thread
// pointer (x86-64 and aarch64 keep it within the thread's static TLS area);
// a module's block further away is dynamic TLS (dlopen), left unfiltered.
struct TlsScan {
  uintptr_t tp, lo, hi;
};
constexpr uintptr_t kStaticTlsReach = uintptr_t{16} << 20;

int scan_module(struct dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<TlsScan*>(data);
  if (info->dlpi_tls_data == nullptr) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_TLS) continue;
    const uintptr_t lo = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
    const uintptr_t hi = lo + info->dlpi_phdr[i].p_memsz;
    const uintptr_t distance = lo > s->tp ? lo - s->tp : s->tp - lo;
    if (distance > kStaticTlsReach) continue;
    if (lo < s->lo) s->lo = lo;
    if (hi > s->hi) s->hi = hi;
  }
  return 0;
}

}  // namespace

void fill_bounds(ThreadBounds& b) {
  b.ready = true;  // first: what runs below must not come back here
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    size_t size = 0;
    // For a thread glibc made, the block holds its stack, static TLS and
    // descriptor; for the main thread, the stack up to its rlimit.
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      b.stack_lo = reinterpret_cast<uintptr_t>(addr);
      b.stack_size = size;
    }
    pthread_attr_destroy(&attr);
  }
  TlsScan s{reinterpret_cast<uintptr_t>(__builtin_thread_pointer()), UINTPTR_MAX, 0};
  dl_iterate_phdr(scan_module, &s);
  if (s.lo < s.hi) {
    b.tls_lo = s.lo;
    b.tls_size = s.hi - s.lo;
  }
}

namespace {
__attribute__((constructor)) void start() { resolve(); }
}  // namespace

}  // namespace racelab::tsan_rt

using racelab::tsan_rt::access;

// One function per size: the compiler calls the one that fits the access.
#define RACELAB_TSAN_RW(n)                                                                          \
  void __tsan_read##n(void* addr) { access(addr, n, RACELAB_ACCESS_READ, "mem.read"); }             \
  void __tsan_write##n(void* addr) { access(addr, n, RACELAB_ACCESS_WRITE, "mem.write"); }          \
  void __tsan_volatile_read##n(void* addr) { access(addr, n, RACELAB_ACCESS_READ, "mem.read"); }    \
  void __tsan_volatile_write##n(void* addr) { access(addr, n, RACELAB_ACCESS_WRITE, "mem.write"); }
#define RACELAB_TSAN_UNALIGNED(n)                                                                         \
  void __tsan_unaligned_read##n(const void* addr) { access(addr, n, RACELAB_ACCESS_READ, "mem.read"); }    \
  void __tsan_unaligned_write##n(void* addr) { access(addr, n, RACELAB_ACCESS_WRITE, "mem.write"); }       \
  void __tsan_unaligned_volatile_read##n(void* addr) { access(addr, n, RACELAB_ACCESS_READ, "mem.read"); } \
  void __tsan_unaligned_volatile_write##n(void* addr) { access(addr, n, RACELAB_ACCESS_WRITE, "mem.write"); }

extern "C" {

void __tsan_init(void) { racelab::tsan_rt::resolve(); }
void __tsan_func_entry(void*) {}
void __tsan_func_exit(void) {}

RACELAB_TSAN_RW(1)
RACELAB_TSAN_RW(2)
RACELAB_TSAN_RW(4)
RACELAB_TSAN_RW(8)
RACELAB_TSAN_RW(16)
RACELAB_TSAN_UNALIGNED(2)
RACELAB_TSAN_UNALIGNED(4)
RACELAB_TSAN_UNALIGNED(8)
RACELAB_TSAN_UNALIGNED(16)

void __tsan_read_range(void* addr, unsigned long size) { access(addr, size, RACELAB_ACCESS_READ, "mem.read"); }
void __tsan_write_range(void* addr, unsigned long size) { access(addr, size, RACELAB_ACCESS_WRITE, "mem.write"); }

// C++ virtual pointers: written by constructors and destructors, read by
// virtual calls. A write is a point (an object published half-built races
// there); reads are too frequent and too rarely racy to be worth a step each.
void __tsan_vptr_update(void** vptr, void* new_value) {
  if (*vptr != new_value) access(vptr, sizeof(void*), RACELAB_ACCESS_WRITE, "mem.vptr");
}
void __tsan_vptr_read(void**) {}

}  // extern "C"
