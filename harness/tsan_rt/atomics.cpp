// tsan_rt/atomics.cpp -- the 8- to 64-bit atomics and the fences (atomic_ops.h).
#include "tsan_rt/atomic_ops.h"

RACELAB_TSAN_DEFINE_ATOMICS(8)
RACELAB_TSAN_DEFINE_ATOMICS(16)
RACELAB_TSAN_DEFINE_ATOMICS(32)
RACELAB_TSAN_DEFINE_ATOMICS(64)

// Not points: under racelab one thread runs at a time, so every execution is
// sequentially consistent and a fence orders nothing more. They still fence,
// for a program that runs free.
extern "C" void __tsan_atomic_thread_fence(__tsan_memory_order) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
extern "C" void __tsan_atomic_signal_fence(__tsan_memory_order) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
