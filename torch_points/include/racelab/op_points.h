// racelab/op_points.h -- op-level points in a LibTorch program: entering an ATen
// op becomes an interleaving point named after the op ("aten::fill_").
//
//   racelab::OpPoints op_points({"aten::(add_|copy_|index_put_).*"});
//
// While an OpPoints lives, a global at::RecordFunction callback makes every ATen
// op that a managed thread enters, and whose name the filter matches, a point,
// so threads racing on a shared tensor (an item() read and a fill_() write) can
// be interleaved between ops without any change to the program's source. Threads
// the controller does not manage (LibTorch's own intra-op pool) and programs with
// no controller attached pay one check per op and are never paused.
//
// The sampling rate keeps dense op streams cheap: a matching op entry becomes a
// point with probability `rate`, decided by a hash of (seed, op name, how many
// times this thread entered that op), not by a random number, so a replay of a
// schedule sees the same points. Library: racelab::op_points (needs LibTorch,
// built against the one the program links).
#ifndef RACELAB_OP_POINTS_H_
#define RACELAB_OP_POINTS_H_

#include <cstdint>
#include <optional>
#include <string>

namespace racelab {

struct OpPointOptions {
  std::string filter = ".*";  // ECMAScript regex that must match the whole op name
  double rate = 1.0;          // in [0, 1]: the fraction of matching op entries that are points
  uint64_t seed = 0;          // which entries a rate below 1 keeps
};

class OpPoints {
 public:
  // Registers the callback. Throws std::invalid_argument for a filter that is no
  // regex or a rate outside [0, 1], and std::logic_error if another OpPoints is
  // alive (the callback is process-wide).
  explicit OpPoints(const OpPointOptions& options = {});
  ~OpPoints();  // removes the callback
  OpPoints(const OpPoints&) = delete;
  OpPoints& operator=(const OpPoints&) = delete;

  // Points made so far (ops that passed the filter and the sampling, on managed threads).
  int64_t points() const;

  // From the environment: RACELAB_OP_POINTS (the filter; unset: nullopt),
  // RACELAB_OP_POINTS_RATE and RACELAB_OP_POINTS_SEED. Throws
  // std::invalid_argument naming the variable for a value that is no number.
  static std::optional<OpPointOptions> options_from_env();
};

}  // namespace racelab

#endif  // RACELAB_OP_POINTS_H_
