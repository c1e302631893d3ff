// Memory-access points on C++ atomics, built with racelab-c++: two threads
// count with std::atomic (fetch_add, and a compare-exchange loop that raises
// a high-water mark) while keeping tallies of their own on the stack and in a
// thread_local. No bug: it must hold. Run natively on two cores it shows the
// runtime performs each atomic atomically; under racelab exec every atomic is
// a point and the stack and thread-local accesses are not.
//   atomic_counter [N]   N increments per thread (default 2000)
// Expected: total == 2N, peak == N - 1, each thread's own tallies == N.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

static std::atomic<long> total{0};
static std::atomic<long> peak{0};
static thread_local long tally;

// Not inlined: the array is reached through a pointer, so its accesses are
// instrumented (and filtered as the stack's).
__attribute__((noinline)) static long sum(volatile long* v, int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

static bool count(long n) {
  volatile long local[4] = {0, 0, 0, 0};
  for (long i = 0; i < n; ++i) {
    total.fetch_add(1);
    long seen = peak.load();
    while (seen < i && !peak.compare_exchange_weak(seen, i)) {
    }
    ++tally;
    local[i & 3] = local[i & 3] + 1;
  }
  return tally == n && sum(local, 4) == n;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 2000;
  bool ok_a = false, ok_b = false;
  std::thread a([&] { ok_a = count(n); });
  std::thread b([&] { ok_b = count(n); });
  a.join();
  b.join();
  if (total.load() != 2 * n || peak.load() != n - 1 || !ok_a || !ok_b) {
    std::printf("wrong: total %ld (expected %ld), peak %ld (expected %ld), tallies %s\n", total.load(), 2 * n,
                peak.load(), n - 1, ok_a && ok_b ? "right" : "wrong");
    return 1;
  }
  std::printf("total %ld, peak %ld\n", total.load(), peak.load());
  return 0;
}
