// tsan_rt/atomic128.cpp -- the 128-bit atomics, in an object of their own: the
// linker takes it from the archive only for a program that uses them, and such
// a program links libatomic already (the builtins call __atomic_*_16 there).
#include "tsan_rt/atomic_ops.h"

RACELAB_TSAN_DEFINE_ATOMICS(128)
