// tsan_rt/tsan_abi.h -- the ThreadSanitizer entry points that a program
// compiled with -fsanitize=thread calls (gcc 12's list: the __tsan_* names in
// its cc1; clang emits a subset), as racelab's runtime defines them. The
// signatures are libtsan's (compiler-rt's tsan_interface.h and
// tsan_interface_atomic.h), so an object compiled for libtsan links here
// unchanged. Memory orders arrive as libtsan's enum (0 relaxed .. 5 seq_cst);
// the runtime performs every atomic as seq_cst, which is at least as strong.
#ifndef RACELAB_TSAN_RT_TSAN_ABI_H_
#define RACELAB_TSAN_RT_TSAN_ABI_H_

extern "C" {

typedef signed char __tsan_atomic8;
typedef short __tsan_atomic16;
typedef int __tsan_atomic32;
typedef long __tsan_atomic64;
typedef __int128 __tsan_atomic128;
typedef int __tsan_memory_order;

void __tsan_init(void);
void __tsan_func_entry(void* caller_pc);
void __tsan_func_exit(void);

#define RACELAB_TSAN_DECLARE_RW(n)             \
  void __tsan_read##n(void* addr);             \
  void __tsan_write##n(void* addr);            \
  void __tsan_volatile_read##n(void* addr);    \
  void __tsan_volatile_write##n(void* addr);
#define RACELAB_TSAN_DECLARE_UNALIGNED(n)                \
  void __tsan_unaligned_read##n(const void* addr);       \
  void __tsan_unaligned_write##n(void* addr);            \
  void __tsan_unaligned_volatile_read##n(void* addr);    \
  void __tsan_unaligned_volatile_write##n(void* addr);
RACELAB_TSAN_DECLARE_RW(1)
RACELAB_TSAN_DECLARE_RW(2)
RACELAB_TSAN_DECLARE_RW(4)
RACELAB_TSAN_DECLARE_RW(8)
RACELAB_TSAN_DECLARE_RW(16)
RACELAB_TSAN_DECLARE_UNALIGNED(2)
RACELAB_TSAN_DECLARE_UNALIGNED(4)
RACELAB_TSAN_DECLARE_UNALIGNED(8)
RACELAB_TSAN_DECLARE_UNALIGNED(16)
#undef RACELAB_TSAN_DECLARE_RW
#undef RACELAB_TSAN_DECLARE_UNALIGNED

void __tsan_read_range(void* addr, unsigned long size);
void __tsan_write_range(void* addr, unsigned long size);
void __tsan_vptr_update(void** vptr, void* new_value);
void __tsan_vptr_read(void** vptr);

#define RACELAB_TSAN_DECLARE_ATOMIC(n)                                                                          \
  __tsan_atomic##n __tsan_atomic##n##_load(const volatile __tsan_atomic##n* a, __tsan_memory_order mo);         \
  void __tsan_atomic##n##_store(volatile __tsan_atomic##n* a, __tsan_atomic##n v, __tsan_memory_order mo);     \
  __tsan_atomic##n __tsan_atomic##n##_exchange(volatile __tsan_atomic##n* a, __tsan_atomic##n v,                \
                                               __tsan_memory_order mo);                                         \
  __tsan_atomic##n __tsan_atomic##n##_fetch_add(volatile __tsan_atomic##n* a, __tsan_atomic##n v,               \
                                                __tsan_memory_order mo);                                        \
  __tsan_atomic##n __tsan_atomic##n##_fetch_sub(volatile __tsan_atomic##n* a, __tsan_atomic##n v,               \
                                                __tsan_memory_order mo);                                        \
  __tsan_atomic##n __tsan_atomic##n##_fetch_and(volatile __tsan_atomic##n* a, __tsan_atomic##n v,               \
                                                __tsan_memory_order mo);                                        \
  __tsan_atomic##n __tsan_atomic##n##_fetch_or(volatile __tsan_atomic##n* a, __tsan_atomic##n v,                \
                                               __tsan_memory_order mo);                                         \
  __tsan_atomic##n __tsan_atomic##n##_fetch_xor(volatile __tsan_atomic##n* a, __tsan_atomic##n v,               \
                                                __tsan_memory_order mo);                                        \
  __tsan_atomic##n __tsan_atomic##n##_fetch_nand(volatile __tsan_atomic##n* a, __tsan_atomic##n v,              \
                                                 __tsan_memory_order mo);                                       \
  int __tsan_atomic##n##_compare_exchange_strong(volatile __tsan_atomic##n* a, __tsan_atomic##n* c,             \
                                                 __tsan_atomic##n v, __tsan_memory_order mo,                    \
                                                 __tsan_memory_order fail_mo);                                  \
  int __tsan_atomic##n##_compare_exchange_weak(volatile __tsan_atomic##n* a, __tsan_atomic##n* c,               \
                                               __tsan_atomic##n v, __tsan_memory_order mo,                      \
                                               __tsan_memory_order fail_mo);                                    \
  __tsan_atomic##n __tsan_atomic##n##_compare_exchange_val(volatile __tsan_atomic##n* a, __tsan_atomic##n c,    \
                                                           __tsan_atomic##n v, __tsan_memory_order mo,          \
                                                           __tsan_memory_order fail_mo);
RACELAB_TSAN_DECLARE_ATOMIC(8)
RACELAB_TSAN_DECLARE_ATOMIC(16)
RACELAB_TSAN_DECLARE_ATOMIC(32)
RACELAB_TSAN_DECLARE_ATOMIC(64)
RACELAB_TSAN_DECLARE_ATOMIC(128)
#undef RACELAB_TSAN_DECLARE_ATOMIC

void __tsan_atomic_thread_fence(__tsan_memory_order mo);
void __tsan_atomic_signal_fence(__tsan_memory_order mo);

}  // extern "C"

#endif  // RACELAB_TSAN_RT_TSAN_ABI_H_
