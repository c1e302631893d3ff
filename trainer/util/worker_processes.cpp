#include "trainer/util/worker_processes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace racelab::trainer {
namespace {

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) text.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  return text;
}

}  // namespace

std::vector<WorkerExit> run_worker_processes(int workers, const std::function<int(int rank, int out_fd)>& child) {
  std::vector<std::pair<pid_t, int>> started;  // pid, read end of its pipe
  for (int rank = 0; rank < workers; ++rank) {
    int fds[2];
    pid_t pid = -1;
    const bool piped = ::pipe2(fds, O_CLOEXEC) == 0;
    const int err = piped ? 0 : errno;
    if (piped) pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      _exit(child(rank, fds[1]));
    }
    if (pid < 0) {
      const int fork_err = piped ? errno : err;
      if (piped) ::close(fds[0]), ::close(fds[1]);
      for (auto& [p, fd] : started) {
        ::kill(p, SIGKILL);
        ::close(fd);
        wait_for(p);
      }
      throw std::runtime_error(std::string(piped ? "fork" : "pipe") + " for worker process " + std::to_string(rank) +
                               " failed: " + std::strerror(fork_err));
    }
    ::close(fds[1]);  // the child's end; later children must not inherit it
    started.emplace_back(pid, fds[0]);
  }
  std::vector<WorkerExit> exits;
  for (auto& [pid, fd] : started) {
    WorkerExit e;
    e.output = read_all(fd);
    ::close(fd);
    e.status = wait_for(pid);
    exits.push_back(std::move(e));
  }
  return exits;
}

}  // namespace racelab::trainer
