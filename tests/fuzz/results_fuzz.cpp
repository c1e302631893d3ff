// Results files (campaign/results_log.h): read_results skips torn or
// malformed lines with a warning and refuses a file that is not a results file
// only with std::runtime_error naming it. The bytes reach it as a file, as in
// `racelab merge`, through an in-memory file descriptor.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "fuzz_input.h"
#include "campaign/results_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = ::memfd_create("results.jsonl", 0);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  racelab::campaign::ResultsData out;
  try {
    racelab::campaign::read_results(path, &out);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
