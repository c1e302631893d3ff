// cuda/capture_child.h -- isolate_process for the real race: the capture runs in
// a child process, `racelab-cuda-capture` (capture_child_main.cpp), so that no
// call of the trial's own process can touch them (a capture mode is per process).
//
// The child runs capture_loop (capture_loop.h) in global mode and prints what it
// saw, one line per event, which the parent puts back into its trial log:
//   call API CODE      a capture-side call that failed (CODE: the cudaError_t)
//   replayed           a graph instantiated, launched and checked
//   mismatch TEXT      what a replayed graph got wrong
//   done               the last line: the child finished
#ifndef RACELAB_CUDA_CAPTURE_CHILD_H_
#define RACELAB_CUDA_CAPTURE_CHILD_H_

#include <string>
#include <vector>

#include "cuda/capture_loop.h"

namespace racelab::cuda {

inline constexpr const char* kCaptureChildName = "racelab-cuda-capture";
// Holds the pid of the trial process that started the child, which the child
// dies with (engine/child_process.h: die_with_parent).
inline constexpr const char* kCaptureParentPidEnv = "RACELAB_CAPTURE_PARENT_PID";

// $RACELAB_CUDA_CAPTURE, else racelab-cuda-capture next to this executable, else
// the one this build made.
std::string capture_child_path();
// argv for the child: EXE --kernels N --bytes B.
std::vector<std::string> capture_child_args(const std::string& exe, const CaptureSpec& spec);
// Puts the child's lines into `sink`; false, with *problem set, on a line it cannot
// read or a missing "done".
bool parse_capture_child_output(const std::string& out, LogSink& sink, std::string* problem);
// The child's whole program (argv as capture_child_args makes it); its exit code.
int capture_child_main(int argc, char** argv);

}  // namespace racelab::cuda

#endif  // RACELAB_CUDA_CAPTURE_CHILD_H_
