// engine/child_process.h -- the one way racelab starts a child process: the
// supervisor's workers, the zygote, the exec worker's program, the CUDA
// capture child. The one file that calls posix_spawn.
//
// posix_spawn (never fork in a process that may have threads), with the
// child's descriptors wired by file actions; pipes whose ends are close-on-exec
// and moved out of the way of the descriptors a child is given (a dup2 onto a
// descriptor that is already the source keeps its close-on-exec flag, so the
// child would lose it); and every error checked and named. The child's half
// of dying with its parent is die_with_parent(), which it calls itself:
// posix_spawn has no hook to run in the child before exec.
#ifndef RACELAB_ENGINE_CHILD_PROCESS_H_
#define RACELAB_ENGINE_CHILD_PROCESS_H_

#include <sys/types.h>

#include <csignal>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace racelab {

// Duplicates `fd` to the lowest free descriptor at or above `at_least`,
// close-on-exec, and closes `fd`. Throws std::runtime_error naming `what` and
// the system's reason when it cannot (`fd` is closed either way).
int move_fd_high(int fd, int at_least, const std::string& what);

// A pipe whose two ends are close-on-exec and at or above `at_least`.
struct Pipe {
  int read_end = -1;
  int write_end = -1;
};
// Throws std::runtime_error naming `what` when the system refuses; leaves no
// descriptor open then.
Pipe open_pipe(int at_least, const std::string& what);
// `count` such pipes; when one cannot be made, closes those already made and
// throws as open_pipe does.
std::vector<Pipe> open_pipes(size_t count, int at_least, const std::string& what);

// Closes `*fd` if open and sets it to -1.
void close_fd(int* fd);

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is the file run (a path: no PATH search)
  std::string shown_name;         // argv[0] as the child sees it (`ps`), if not empty
  // The child's whole environment; none: ours, as it is.
  std::optional<std::vector<std::string>> env;
  // Set in the child's environment to this process's pid, replacing an
  // inherited value (a child that is itself a parent passes on its own):
  // the child's die_with_parent(NAME) checks it. Empty: not set.
  std::string parent_pid_env;
  std::vector<std::pair<int, int>> dup2;  // {our descriptor, the child's}, in order
  std::vector<int> close;                 // descriptors closed in the child, after the dup2s
  bool stdin_dev_null = false;            // its standard input reads /dev/null
  // A process group of its own, so that a Ctrl-C at the terminal reaches
  // this process, which decides, and not the child.
  bool own_process_group = false;
};

// Starts the child; its pid, or -1 with *error saying what failed (the
// program that could not be started and the system's reason).
pid_t spawn_child(const ChildSpec& spec, std::string* error);

// Waits for `pid` to end (retrying when a signal interrupts the wait); its
// wait status, or -1 when it is not our child.
int wait_child(pid_t pid);

// In the child, first thing: the kernel sends it SIGKILL when the thread that
// started it ends, so a child never outlives a killed parent. False when the
// parent had already ended before that took hold, which the signal will never
// report: the parent's pid in `parent_pid_env` (ChildSpec::parent_pid_env) is
// no longer its parent. The caller should then exit. Without such a variable
// in the environment, only the request is checked.
// `signal` is what the kernel sends: SIGKILL, unless the child must stop
// cleanly (a campaign's local shard asks for SIGTERM, and finishes its
// results file as for a Ctrl-C).
bool die_with_parent(const char* parent_pid_env, int signal = SIGKILL);

}  // namespace racelab

#endif  // RACELAB_ENGINE_CHILD_PROCESS_H_
