// reports/atomic_file.h -- files that are either the old or the new version, never half.
#ifndef RACELAB_REPORTS_ATOMIC_FILE_H_
#define RACELAB_REPORTS_ATOMIC_FILE_H_

#include <string>

namespace racelab::reports {

// Writes `path.tmp`, fsyncs it, and renames it over `path`, so a reader (or a
// campaign killed mid-write) always sees a complete report. Throws
// std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_ATOMIC_FILE_H_
