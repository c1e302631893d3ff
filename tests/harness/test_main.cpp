// The test binary is also its own worker: the supervisor re-executes it as
// `<test binary> __worker`, exactly as `racelab __worker`.
#include <cstring>

#include <gtest/gtest.h>

#include "engine/worker.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "__worker") == 0) return racelab::worker_main();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
