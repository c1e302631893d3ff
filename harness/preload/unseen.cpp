// preload/unseen.cpp -- the count of synchronisation racelab did not see
// (preload/unseen.h), and the calls that are counted as they pass through.
#include "preload/unseen.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "preload/control.h"
#include "preload/real.h"

namespace racelab::preload {

namespace {

// A small fixed table: counting may happen on any thread, in a signal
// handler's call or while the process exits, so no allocation and no lock.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<const char*> call{nullptr};
  std::atomic<bool> unmanaged{false};
  std::atomic<int64_t> count{0};
};
Slot g_slots[kSlots];

}  // namespace

void note_unseen(const char* call, bool unmanaged_thread) {
  if (call == nullptr) return;
  for (Slot& s : g_slots) {
    const char* have = s.call.load(std::memory_order_acquire);
    if (have == nullptr) {
      const char* expected = nullptr;
      if (s.call.compare_exchange_strong(expected, call)) {
        s.unmanaged.store(unmanaged_thread);
        s.count.fetch_add(1);
        return;
      }
      have = expected;
    }
    if ((have == call || std::strcmp(have, call) == 0) && s.unmanaged.load() == unmanaged_thread) {
      s.count.fetch_add(1);
      return;
    }
  }
  // Full: the last slot counts the rest.
  g_slots[kSlots - 1].count.fetch_add(1);
}

void note_unmanaged(const char* call, const void* caller) {
  Inside in;
  Dl_info info{};
  if (caller != nullptr && ::dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
      std::strstr(info.dli_fname, "libgcc_s") != nullptr)
    return;
  note_unseen(call, /*unmanaged_thread=*/true);
}

nlohmann::json unseen_calls() {
  Inside in;
  nlohmann::json out = nlohmann::json::object();
  for (const Slot& s : g_slots) {
    const char* call = s.call.load(std::memory_order_acquire);
    if (call == nullptr) break;
    const std::string name = s.unmanaged.load() ? std::string(call) + " from a thread racelab does not manage" : call;
    out[name] = out.value(name, int64_t{0}) + s.count.load();
  }
  return out;
}

}  // namespace racelab::preload

using namespace racelab::preload;

namespace {

// Counted when a managed thread of a trial makes it (depth 0); every call
// goes on to the C library as it is.
bool counted_here() {
  return g_active.load(std::memory_order_relaxed) && tl.depth == 0;
}

}  // namespace

#define RACELAB_EXPORT extern "C" __attribute__((visibility("default")))

// The futex system call is how std::atomic::wait, std::latch, std::barrier
// and std::counting_semaphore wait and wake. x86-64 passes up to six
// arguments in registers; reading six is what glibc's own syscall() does.
RACELAB_EXPORT long syscall(long number, ...) noexcept {
  va_list ap;
  va_start(ap, number);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
  if (number == SYS_futex && counted_here()) note_unseen("syscall(SYS_futex)");
  return real().syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

RACELAB_EXPORT int sigwait(const sigset_t* set, int* sig) {
  if (counted_here()) note_unseen("sigwait");
  return real().sigwait(set, sig);
}
RACELAB_EXPORT int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  if (counted_here()) note_unseen("sigwaitinfo");
  return real().sigwaitinfo(set, info);
}
RACELAB_EXPORT int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  if (counted_here()) note_unseen("sigtimedwait");
  return real().sigtimedwait(set, info, timeout);
}
RACELAB_EXPORT int sigsuspend(const sigset_t* mask) {
  if (counted_here()) note_unseen("sigsuspend");
  return real().sigsuspend(mask);
}
