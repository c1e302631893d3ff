// cli/torch_part.cpp -- handing a command over to racelab-torch (torch_part.h).
#include "cli/torch_part.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/self_exe.h"
#include "racelab/exit_code.h"
#include "racelab/workload.h"

namespace racelab::cli::torch_part {

namespace {

std::vector<std::string>& kept_argv() {
  static std::vector<std::string> argv;
  return argv;
}

// racelab-torch beside this binary (build tree: both in the build folder;
// installed: both in PREFIX/bin), or $RACELAB_TORCH_PART.
std::string torch_part_path() {
  if (const char* env = std::getenv("RACELAB_TORCH_PART"); env && *env) return env;
  return executable_dir() + "/racelab-torch";
}

void on_workload_miss(const std::string&) {
  // Not found here: the LibTorch part has it, or says that no part does.
  std::exit(hand_over());
}

}  // namespace

void start(int argc, char** argv) {
  kept_argv().assign(argv, argv + argc);
  set_workload_miss_hook(&on_workload_miss);
}

int hand_over() {
  const std::string path = torch_part_path();
  std::vector<char*> argv;
  for (std::string& a : kept_argv()) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Nothing buffered is flushed: the LibTorch part starts the command afresh
  // and writes all of its output itself.
  ::execv(path.c_str(), argv.data());
  std::fprintf(stderr,
               "racelab: cannot start the LibTorch part %s: %s (it is built and installed beside racelab; "
               "RACELAB_TORCH_PART names another)\n",
               path.c_str(), std::strerror(errno));
  return kExitInternal;
}

int command(int, char**) { return hand_over(); }

}  // namespace racelab::cli::torch_part
