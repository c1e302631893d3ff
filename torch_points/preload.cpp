// libracelab_op_points_preload.so: op-level points in a LibTorch program that
// racelab did not build. LD_PRELOADed (beside the racelab host that schedules
// the program, e.g. racelab exec's preload library), it reads
//
//   RACELAB_OP_POINTS='aten::(add_|copy_|index_put_).*'   the filter (empty: every op)
//   RACELAB_OP_POINTS_RATE=0.5  RACELAB_OP_POINTS_SEED=1  the sampling (racelab/op_points.h)
//
// before main and registers the callback; unset, it does nothing. A bad value is
// bad input: it names the variable and exits 3 before the program starts.
#include <unistd.h>

#include <cstdio>
#include <exception>

#include "racelab/exit_code.h"
#include "racelab/op_points.h"

namespace {

__attribute__((constructor)) void start_op_points() {
  try {
    if (auto options = racelab::OpPoints::options_from_env())
      new racelab::OpPoints(*options);  // lives as long as the process
  } catch (const std::exception& e) {
    std::fprintf(stderr, "racelab op points (RACELAB_OP_POINTS*): %s\n", e.what());
    ::_exit(racelab::kExitBadInput);
  }
}

}  // namespace
