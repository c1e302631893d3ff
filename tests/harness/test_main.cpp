// The test binary is also its own worker: the supervisor re-executes it as
// `<test binary> __worker`, exactly as `racelab __worker`, and starts it as
// `<test binary> __zygote` to fork workers (engine/zygote.h).
#include <cstring>

#include <gtest/gtest.h>

#include "engine/worker.h"
#include "engine/zygote.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "__worker") == 0) return racelab::worker_main();
  if (argc > 1 && std::strcmp(argv[1], "__zygote") == 0) return racelab::zygote_main();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
