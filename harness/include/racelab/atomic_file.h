// racelab/atomic_file.h -- files that are either the old or the new version, never half.
//
// Every file racelab writes for someone else to read later (reports, schedules,
// summaries, checkpoints) goes through here, so a reader -- or a run killed
// mid-write, or a machine that loses power -- never sees a torn file.
#ifndef RACELAB_ATOMIC_FILE_H_
#define RACELAB_ATOMIC_FILE_H_

#include <initializer_list>
#include <string>
#include <string_view>

namespace racelab {

// Writes the pieces, in order, to `path.tmp`, fsyncs and closes it, renames it
// over `path`, and fsyncs the directory so the rename itself is durable. Every
// failing step is reported: throws FileError (racelab/file_error.h) naming the file, the step
// and the system's reason, after removing the temporary file.
void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> pieces);
inline void write_file_atomically(const std::string& path, std::string_view content) {
  write_file_atomically(path, {content});
}

}  // namespace racelab

#endif  // RACELAB_ATOMIC_FILE_H_
