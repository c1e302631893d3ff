// An ordinary LibTorch program that knows nothing of racelab, with a lost
// update on a shared tensor: two threads each read the counter (item()) and
// write it back plus one (fill_()), with no lock. Between the two ops there is
// no pthread call, so under racelab exec alone the threads never interleave
// there; with libracelab_op_points_preload.so preloaded beside the shim and
// RACELAB_OP_POINTS naming aten::fill_, entering fill_ is a point, and a
// thread paused there lets the other's increments in. Exits 1 on a lost update.
#include <cstdio>
#include <thread>

#include <ATen/core/Tensor.h>
#include <ATen/ops/zeros.h>

int main() {
  constexpr int kRounds = 3;
  at::Tensor counter = at::zeros({1}, at::kLong);
  auto work = [&counter] {
    for (int i = 0; i < kRounds; ++i) {
      const int64_t seen = counter.item<int64_t>();
      counter.fill_(seen + 1);
    }
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  const int64_t count = counter.item<int64_t>();
  if (count != 2 * kRounds) {
    std::printf("lost update: count %lld, expected %d\n", static_cast<long long>(count), 2 * kRounds);
    return 1;
  }
  std::printf("count %lld\n", static_cast<long long>(count));
  return 0;
}
