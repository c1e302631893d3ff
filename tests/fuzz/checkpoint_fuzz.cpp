// Checkpoint files (trainer/checkpoint/file_format.h): decode refuses a bad
// header, length, checksum or meta only with racelab::trainer::BadInput.
#include <vector>

#include "fuzz_input.h"
#include "trainer/checkpoint/file_format.h"
#include "trainer/util/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<char> bytes(reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + size);
  try {
    (void)racelab::trainer::checkpoint::decode(bytes, "fuzz.ckpt", "drafters");
  } catch (const racelab::trainer::BadInput&) {
  }
  return 0;
}
