// engine/child_process.h: the one way racelab starts a child process -- its
// descriptors wired, ours kept out of its way, its parent's pid passed on, a
// process group of its own, and every failure named.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "engine/child_process.h"

namespace {

using racelab::ChildSpec;
using racelab::Pipe;

// Runs `script` under /bin/sh with its standard output in a pipe; what it
// printed, and its wait status in *status.
std::string run_sh(const std::string& script, ChildSpec child, int* status) {
  Pipe out = racelab::open_pipe(10, "test");
  child.argv = {"/bin/sh", "-c", script};
  child.dup2.push_back({out.write_end, 1});
  std::string error;
  const pid_t pid = racelab::spawn_child(child, &error);
  racelab::close_fd(&out.write_end);
  EXPECT_GT(pid, 0) << error;
  std::string text;
  char buf[4096];
  ssize_t got;
  while ((got = ::read(out.read_end, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR)) {
    if (got > 0) text.append(buf, static_cast<size_t>(got));
  }
  racelab::close_fd(&out.read_end);
  *status = pid > 0 ? racelab::wait_child(pid) : -1;
  return text;
}

TEST(ChildProcess, ItsOutputComesThroughThePipeAndItsExitStatusBack) {
  int status = -1;
  EXPECT_EQ(run_sh("echo hello; exit 3", {}, &status), "hello\n");
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST(ChildProcess, PipeEndsAreCloseOnExecAboveTheFloorAndNotInTheChild) {
  Pipe p = racelab::open_pipe(300, "test");
  EXPECT_GE(p.read_end, 300);
  EXPECT_GE(p.write_end, 300);
  EXPECT_TRUE(::fcntl(p.read_end, F_GETFD) & FD_CLOEXEC);
  EXPECT_TRUE(::fcntl(p.write_end, F_GETFD) & FD_CLOEXEC);
  int status = -1;
  const std::string fds = run_sh("ls /proc/self/fd", {}, &status);
  std::set<std::string> seen;
  std::istringstream in(fds);
  for (std::string fd; in >> fd;) seen.insert(fd);
  EXPECT_FALSE(seen.count(std::to_string(p.read_end))) << fds;
  EXPECT_FALSE(seen.count(std::to_string(p.write_end))) << fds;
  racelab::close_fd(&p.read_end);
  racelab::close_fd(&p.write_end);
  EXPECT_EQ(p.read_end, -1);
}

TEST(ChildProcess, OpenPipesClosesThePipesItMadeWhenALaterOneFails) {
  auto open_fds = [] {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  rlimit lim{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  // Room above the floor for three descriptors: the first pipe fits, the
  // second's write end does not.
  const int floor = static_cast<int>(lim.rlim_cur) - 3;
  const size_t before = open_fds();
  EXPECT_THROW(racelab::open_pipes(3, floor, "test"), std::runtime_error);
  EXPECT_EQ(open_fds(), before);
  const auto pipes = racelab::open_pipes(3, 10, "test");
  ASSERT_EQ(pipes.size(), 3u);
  for (Pipe p : pipes) {
    EXPECT_GE(p.read_end, 10);
    EXPECT_GE(p.write_end, 10);
    racelab::close_fd(&p.read_end);
    racelab::close_fd(&p.write_end);
  }
  EXPECT_EQ(open_fds(), before);
}

TEST(ChildProcess, ADescriptorIsGivenAtTheNumberAsked) {
  Pipe in = racelab::open_pipe(10, "test");
  ASSERT_EQ(::write(in.write_end, "from fd 7\n", 10), 10);
  racelab::close_fd(&in.write_end);
  ChildSpec child;
  child.dup2 = {{in.read_end, 7}};
  int status = -1;
  EXPECT_EQ(run_sh("cat <&7", child, &status), "from fd 7\n");
  racelab::close_fd(&in.read_end);
}

TEST(ChildProcess, TheParentPidVariableNamesThisProcessOverAnInheritedOne) {
  ::setenv("RACELAB_TEST_PARENT", "1", 1);  // as a child of another parent would inherit it
  ChildSpec child;
  child.parent_pid_env = "RACELAB_TEST_PARENT";
  int status = -1;
  EXPECT_EQ(run_sh("echo $RACELAB_TEST_PARENT", child, &status), std::to_string(::getpid()) + "\n");
  ::unsetenv("RACELAB_TEST_PARENT");
}

TEST(ChildProcess, AGivenEnvironmentIsTheWholeEnvironment) {
  ChildSpec child;
  child.env = std::vector<std::string>{"ONLY=this"};
  int status = -1;
  EXPECT_EQ(run_sh("echo \"$ONLY ${HOME:-no-home}\"", child, &status), "this no-home\n");
}

TEST(ChildProcess, ItsOwnProcessGroupWhenAsked) {
  ChildSpec child;
  child.own_process_group = true;
  int status = -1;
  std::istringstream out(run_sh("echo $$ $(cut -d' ' -f5 /proc/$$/stat)", child, &status));
  long pid = 0, group = 0;
  out >> pid >> group;
  EXPECT_GT(pid, 0);
  EXPECT_EQ(group, pid);
  EXPECT_NE(group, static_cast<long>(::getpgrp()));
}

TEST(ChildProcess, AProgramThatIsNotThereIsANamedError) {
  ChildSpec child;
  child.argv = {"/no/such/program"};
  std::string error;
  EXPECT_EQ(racelab::spawn_child(child, &error), -1);
  EXPECT_NE(error.find("/no/such/program"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST(ChildProcess, ABadDescriptorIsANamedErrorAndNothingStarts) {
  ChildSpec child;
  child.argv = {"/bin/true"};
  child.dup2 = {{-1, 1}};
  std::string error;
  EXPECT_EQ(racelab::spawn_child(child, &error), -1);
  EXPECT_NE(error.find("descriptor -1 as 1"), std::string::npos) << error;
}

TEST(ChildProcess, MovingADescriptorThatIsNotOpenThrowsNamingIt) {
  try {
    racelab::move_fd_high(987, 10, "the test's pipe");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the test's pipe: cannot move descriptor 987"), std::string::npos) << e.what();
  }
}

// die_with_parent in a forked child of this test (the request outlives the
// call, and this process must not get it).
int die_with_parent_in_child(const char* value) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (value != nullptr) {
      ::setenv("RACELAB_TEST_PARENT", value, 1);
    } else {
      ::unsetenv("RACELAB_TEST_PARENT");
    }
    ::_exit(racelab::die_with_parent("RACELAB_TEST_PARENT") ? 0 : 1);
  }
  const int status = racelab::wait_child(pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ChildProcess, DieWithParentSaysWhenTheNamedParentIsNotItsParent) {
  EXPECT_EQ(die_with_parent_in_child(std::to_string(::getpid()).c_str()), 0);  // we are its parent
  EXPECT_EQ(die_with_parent_in_child("1"), 1);                                 // init is not
  EXPECT_EQ(die_with_parent_in_child(nullptr), 0);                             // nothing to check
}

}  // namespace
