// racelab -- dispatches `racelab <command> ...` to a registered subcommand.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "racelab/command.h"

namespace {
void print_usage(std::FILE* out) {
  std::fprintf(out, "racelab %s -- reproduce, diagnose and compare mitigations for compile races\n\n",
               RACELAB_VERSION);
  std::fprintf(out, "usage: racelab <command> [options]   (racelab <command> --help for details)\n\ncommands:\n");
  for (const auto& c : racelab::commands()) {
    if (c.name.rfind("__", 0) == 0) continue;  // internal (e.g. __worker, re-executed by the supervisor)
    std::fprintf(out, "  %-14s %s\n", c.name.c_str(), c.summary.c_str());
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? racelab::kExitUsage : racelab::kExitOk;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("racelab %s\n", RACELAB_VERSION);
    return racelab::kExitOk;
  }
  for (const auto& c : racelab::commands()) {
    if (c.name != argv[1]) continue;
    std::string self = std::string("racelab ") + argv[1];
    argv[1] = self.data();
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "racelab %s: internal error: %s\n", c.name.c_str(), e.what());
      return racelab::kExitInternal;
    }
  }
  std::fprintf(stderr, "racelab: unknown command '%s'\n\n", argv[1]);
  print_usage(stderr);
  return racelab::kExitUsage;
}
