#include "campaign/cell_claims.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace racelab::campaign {

double estimated_cell_cost(const PlannedCell& cell) {
  // Measured on the catalogue (docs/RESULTS.md): a trainer trial ~1 s against
  // 10-23 ms for a compile-layer micro trial.
  const double per_trial = cell.spec.workload == "trainer" ? 60.0 : 1.0;
  return per_trial * static_cast<double>(cell.spec.max_trials) * static_cast<double>(std::max(1, cell.spec.threads));
}

std::vector<PlannedCell> order_by_cost(std::vector<PlannedCell> cells) {
  std::stable_sort(cells.begin(), cells.end(), [](const PlannedCell& a, const PlannedCell& b) {
    return estimated_cell_cost(a) > estimated_cell_cost(b);
  });
  return cells;
}

CellClaims::CellClaims(std::string path) : path_(std::move(path)) {}

int64_t CellClaims::next() {
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cell claims " + path_ + ": " + std::strerror(errno));
  int64_t n = 0;
  bool ok = ::flock(fd, LOCK_EX) == 0;
  // An empty file is 0: the first shard to claim creates it.
  ok = ok && ::pread(fd, &n, sizeof n, 0) >= 0;
  const int64_t after = n + 1;
  ok = ok && ::pwrite(fd, &after, sizeof after, 0) == static_cast<ssize_t>(sizeof after);
  const int err = errno;
  ::close(fd);  // releases the lock
  if (!ok) throw std::runtime_error("cell claims " + path_ + ": " + std::strerror(err));
  return n;
}

}  // namespace racelab::campaign
