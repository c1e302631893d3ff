// trainer/util/rng.h -- small, portable, seedable randomness.
//
// std::uniform_int_distribution differs between standard libraries, so the
// corpus and the data streams use splitmix64 and plain modular reduction: the
// same seed gives the same tokens on every platform. Streams are derived, not
// shared: stream(seed, worker, step) is independent of thread timing, which is
// what makes multi-worker runs and --resume reproducible.
#ifndef TRAINER_UTIL_RNG_H_
#define TRAINER_UTIL_RNG_H_

#include <cstdint>

namespace racelab::trainer {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  // A generator for one (seed, a, b) triple, e.g. (run seed, worker, step).
  static Rng derive(uint64_t seed, uint64_t a, uint64_t b = 0) {
    uint64_t s = seed ^ 0x5851F42D4C957F2DULL;
    uint64_t x = splitmix64(s) ^ (a * 0xD1B54A32D192ED03ULL);
    uint64_t y = splitmix64(x) ^ (b * 0x8CB92BA72F3D8DD7ULL);
    return Rng(splitmix64(y));
  }
  uint64_t next() { return splitmix64(state_); }
  // Uniform in [0, n); the modulo bias is negligible for the n used here.
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t state_;
};

}  // namespace racelab::trainer

#endif  // TRAINER_UTIL_RNG_H_
