#include "engine/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace racelab {

int move_fd_high(int fd, int at_least, const std::string& what) {
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, at_least);
  const int err = errno;
  ::close(fd);
  if (high < 0)
    throw std::runtime_error(
        fmt::format("{}: cannot move descriptor {} to {} or above: {}", what, fd, at_least, std::strerror(err)));
  return high;
}

Pipe open_pipe(int at_least, const std::string& what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("{}: pipe: {}", what, std::strerror(errno)));
  Pipe p;
  try {
    p.read_end = move_fd_high(fds[0], at_least, what);
  } catch (...) {
    ::close(fds[1]);
    throw;
  }
  try {
    p.write_end = move_fd_high(fds[1], at_least, what);
  } catch (...) {
    ::close(p.read_end);
    throw;
  }
  return p;
}

std::vector<Pipe> open_pipes(size_t count, int at_least, const std::string& what) {
  std::vector<Pipe> pipes;
  try {
    while (pipes.size() < count) pipes.push_back(open_pipe(at_least, what));
  } catch (...) {
    for (Pipe& p : pipes) {
      close_fd(&p.read_end);
      close_fd(&p.write_end);
    }
    throw;
  }
  return pipes;
}

void close_fd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

namespace {

// The posix_spawn objects, destroyed however spawn_child leaves.
struct SpawnObjects {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  bool have_actions = false, have_attr = false;
  ~SpawnObjects() {
    if (have_actions) posix_spawn_file_actions_destroy(&actions);
    if (have_attr) posix_spawnattr_destroy(&attr);
  }
};

}  // namespace

pid_t spawn_child(const ChildSpec& spec, std::string* error) {
  if (spec.argv.empty()) {
    *error = "cannot start a child process: no program named";
    return -1;
  }
  const std::string& file = spec.argv[0];
  // posix_spawn*'s functions return the error number (they do not set errno).
  auto failed = [&](const char* step, int err) {
    *error = fmt::format("cannot start {}: {}: {}", file, step, std::strerror(err));
    return static_cast<pid_t>(-1);
  };
  SpawnObjects o;
  if (int rc = posix_spawn_file_actions_init(&o.actions)) return failed("file actions", rc);
  o.have_actions = true;
  if (int rc = posix_spawnattr_init(&o.attr)) return failed("attributes", rc);
  o.have_attr = true;
  if (spec.stdin_dev_null) {
    if (int rc = posix_spawn_file_actions_addopen(&o.actions, 0, "/dev/null", O_RDONLY, 0)) {
      return failed("standard input from /dev/null", rc);
    }
  }
  for (const auto& [ours, theirs] : spec.dup2) {
    if (int rc = posix_spawn_file_actions_adddup2(&o.actions, ours, theirs)) {
      return failed(fmt::format("descriptor {} as {}", ours, theirs).c_str(), rc);
    }
  }
  for (int fd : spec.close) {
    if (int rc = posix_spawn_file_actions_addclose(&o.actions, fd)) {
      return failed(fmt::format("closing descriptor {}", fd).c_str(), rc);
    }
  }
  if (spec.own_process_group) {
    if (int rc = posix_spawnattr_setflags(&o.attr, POSIX_SPAWN_SETPGROUP)) return failed("process group", rc);
    if (int rc = posix_spawnattr_setpgroup(&o.attr, 0)) return failed("process group", rc);
  }

  std::vector<std::string> env;
  if (spec.env) {
    env = *spec.env;
  } else {
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  }
  if (!spec.parent_pid_env.empty()) {
    const std::string prefix = spec.parent_pid_env + "=";
    env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }),
              env.end());
    env.push_back(prefix + std::to_string(::getpid()));
  }
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  if (!spec.shown_name.empty()) args[0] = spec.shown_name;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  if (int rc = ::posix_spawn(&pid, file.c_str(), &o.actions, &o.attr, argv.data(), envp.data())) {
    *error = fmt::format("cannot start {}: {}", file, std::strerror(rc));
    return -1;
  }
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

bool die_with_parent(const char* parent_pid_env, int signal) {
  if (::prctl(PR_SET_PDEATHSIG, signal) != 0) return false;
  // The parent may have ended before prctl: then the signal never comes.
  const char* expected = parent_pid_env != nullptr ? std::getenv(parent_pid_env) : nullptr;
  return expected == nullptr || std::atoll(expected) == static_cast<long long>(::getppid());
}

}  // namespace racelab
