#include "engine/self_exe.h"

#include <limits.h>
#include <unistd.h>

namespace racelab {

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  const std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.find_last_of('/'));
}

}  // namespace racelab
