// trainer/util/errors.h -- the one error type the CLI maps to "bad input".
//
// Anything the user handed us that we cannot use (a data file, a checkpoint, a
// TorchScript target) raises BadInput with a message that names the file, the
// field and what was expected. Everything else is a bug or a runtime failure.
#ifndef TRAINER_UTIL_ERRORS_H_
#define TRAINER_UTIL_ERRORS_H_

#include <stdexcept>
#include <string>

namespace racelab::trainer {

class BadInput : public std::runtime_error {
 public:
  explicit BadInput(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace racelab::trainer

#endif  // TRAINER_UTIL_ERRORS_H_
