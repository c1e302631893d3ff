#include "cli/flags.h"

#include "racelab/exit_code.h"

namespace racelab::cli {

int parse_flags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints --help to stdout and errors to stderr; its codes are its own.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  return kGoOn;
}

int usage_error(const CLI::App& app, const CLI::Error& error) {
  app.exit(error);
  return kExitUsage;
}

}  // namespace racelab::cli
