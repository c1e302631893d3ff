// The zero-cost baseline for point_bench.cpp: the same loop body with the point
// compiled out (what RACELAB_POINTS=OFF produces). Kept in its own translation
// unit so it cannot see racelab/point.h.
#include <cstdint>

namespace racelab::bench {

// noinline + the volatile sink keep the compiler from deleting the loop.
__attribute__((noinline)) void loop_without_points(int64_t iterations, volatile int64_t* sink) {
  for (int64_t i = 0; i < iterations; ++i) *sink = i;
}

}  // namespace racelab::bench
