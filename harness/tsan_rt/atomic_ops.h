// tsan_rt/atomic_ops.h -- the __tsan_atomicN_* functions for one width N,
// defined by RACELAB_TSAN_DEFINE_ATOMICS(N): a point (access.h), then the
// operation itself with the compiler's __atomic builtins. A load is a read of
// its object; every other operation, a failed compare-exchange included, is a
// write, so a search that reduces by objects never treats two of them as
// independent. All run seq_cst (tsan_abi.h); a weak compare-exchange never
// fails spuriously, which it is allowed not to.
#ifndef RACELAB_TSAN_RT_ATOMIC_OPS_H_
#define RACELAB_TSAN_RT_ATOMIC_OPS_H_

#include "tsan_rt/access.h"
#include "tsan_rt/tsan_abi.h"

#define RACELAB_TSAN_RMW(n, op)                                                                         \
  __tsan_atomic##n __tsan_atomic##n##_##op(volatile __tsan_atomic##n* a, __tsan_atomic##n v,            \
                                           __tsan_memory_order) {                                       \
    racelab::tsan_rt::access(a, sizeof(*a), RACELAB_ACCESS_WRITE, "atomic.rmw");                        \
    return __atomic_##op(a, v, __ATOMIC_SEQ_CST);                                                       \
  }

#define RACELAB_TSAN_DEFINE_ATOMICS(n)                                                                          \
  extern "C" {                                                                                                  \
  __tsan_atomic##n __tsan_atomic##n##_load(const volatile __tsan_atomic##n* a, __tsan_memory_order) {          \
    racelab::tsan_rt::access(a, sizeof(*a), RACELAB_ACCESS_READ, "atomic.load");                                \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                                                \
  }                                                                                                             \
  void __tsan_atomic##n##_store(volatile __tsan_atomic##n* a, __tsan_atomic##n v, __tsan_memory_order) {       \
    racelab::tsan_rt::access(a, sizeof(*a), RACELAB_ACCESS_WRITE, "atomic.store");                              \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                                   \
  }                                                                                                             \
  __tsan_atomic##n __tsan_atomic##n##_exchange(volatile __tsan_atomic##n* a, __tsan_atomic##n v,                \
                                               __tsan_memory_order) {                                           \
    racelab::tsan_rt::access(a, sizeof(*a), RACELAB_ACCESS_WRITE, "atomic.rmw");                                \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                                         \
  }                                                                                                             \
  RACELAB_TSAN_RMW(n, fetch_add)                                                                                \
  RACELAB_TSAN_RMW(n, fetch_sub)                                                                                \
  RACELAB_TSAN_RMW(n, fetch_and)                                                                                \
  RACELAB_TSAN_RMW(n, fetch_or)                                                                                 \
  RACELAB_TSAN_RMW(n, fetch_xor)                                                                                \
  RACELAB_TSAN_RMW(n, fetch_nand)                                                                               \
  int __tsan_atomic##n##_compare_exchange_strong(volatile __tsan_atomic##n* a, __tsan_atomic##n* c,             \
                                                 __tsan_atomic##n v, __tsan_memory_order, __tsan_memory_order) { \
    racelab::tsan_rt::access(a, sizeof(*a), RACELAB_ACCESS_WRITE, "atomic.cas");                                \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);                     \
  }                                                                                                             \
  int __tsan_atomic##n##_compare_exchange_weak(volatile __tsan_atomic##n* a, __tsan_atomic##n* c,               \
                                               __tsan_atomic##n v, __tsan_memory_order mo,                      \
                                               __tsan_memory_order fail_mo) {                                   \
    return __tsan_atomic##n##_compare_exchange_strong(a, c, v, mo, fail_mo);                                    \
  }                                                                                                             \
  __tsan_atomic##n __tsan_atomic##n##_compare_exchange_val(volatile __tsan_atomic##n* a, __tsan_atomic##n c,    \
                                                           __tsan_atomic##n v, __tsan_memory_order mo,          \
                                                           __tsan_memory_order fail_mo) {                       \
    __tsan_atomic##n##_compare_exchange_strong(a, &c, v, mo, fail_mo);                                          \
    return c;                                                                                                   \
  }                                                                                                             \
  }

#endif  // RACELAB_TSAN_RT_ATOMIC_OPS_H_
