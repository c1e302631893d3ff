// `racelab ci`: run scenario expectations as a regression check; exit 0 only
// if every expectation holds. Also writes JUnit XML (--junit).
#include "cli/campaign_command.h"
#include "cli/commands.h"

namespace racelab::cli {

int ci_command(int argc, char** argv) { return run_catalogue(/*ci=*/true, argc, argv); }

}  // namespace racelab::cli
