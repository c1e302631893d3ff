// engine/self_exe.h -- where the running racelab lives.
//
// An installed racelab finds what it ships beside it from its own prefix
// (<prefix>/bin/racelab: ../lib, ../share/racelab), and a built one from its
// build directory, wherever the prefix or the tree was moved.
#ifndef RACELAB_ENGINE_SELF_EXE_H_
#define RACELAB_ENGINE_SELF_EXE_H_

#include <string>

namespace racelab {

// The directory of /proc/self/exe; "." when it cannot be read.
std::string executable_dir();

}  // namespace racelab

#endif  // RACELAB_ENGINE_SELF_EXE_H_
