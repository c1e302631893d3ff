// racelab/file_error.h -- a file racelab could not create, write or read.
//
// The cause is outside racelab (a path that does not exist, permissions, a
// full disk), so every command reports it as bad input or environment
// (kExitBadInput, racelab/exit_code.h) with the path and the system's reason,
// never as an internal error. Thrown by the atomic writer and the JSONL writer.
#ifndef RACELAB_FILE_ERROR_H_
#define RACELAB_FILE_ERROR_H_

#include <stdexcept>

namespace racelab {

class FileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;  // what(): "cannot STEP PATH: REASON"
};

}  // namespace racelab

#endif  // RACELAB_FILE_ERROR_H_
