// `racelab compare`: run the catalogue (default: scenarios/) and write the
// mitigation comparison -- report.json, report.md, report.html, traces/.
#include "cli/campaign_command.h"
#include "cli/commands.h"

namespace racelab::cli {

int compare_command(int argc, char** argv) { return run_catalogue(/*ci=*/false, argc, argv); }

}  // namespace racelab::cli
