// An ordinary LibTorch program that knows nothing of racelab: two threads
// increment one tensor, each with item() then fill_() (a lost update when the
// two interleave between the ops). Prints the final count.
#include <cstdio>
#include <thread>

#include <ATen/core/Tensor.h>
#include <ATen/ops/zeros.h>

int main() {
  at::Tensor counter = at::zeros({1}, at::kLong);
  auto work = [&counter] {
    for (int i = 0; i < 50; ++i) {
      const int64_t seen = counter.item<int64_t>();
      counter.fill_(seen + 1);
    }
  };
  std::thread a(work);
  a.join();  // one after the other: the count is exact, whatever the points do
  std::thread b(work);
  b.join();
  std::printf("count %lld\n", static_cast<long long>(counter.item<int64_t>()));
  return 0;
}
