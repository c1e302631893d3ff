// cli/campaign_command.h -- what the campaign commands (compare, ci, merge)
// share: running a catalogue, in this process or as local shards, and
// printing a campaign's verdicts. The work itself lives in campaign/
// (running) and reports/ (rendering).
#ifndef RACELAB_CLI_CAMPAIGN_COMMAND_H_
#define RACELAB_CLI_CAMPAIGN_COMMAND_H_

#include <string>

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace racelab::cli {

// `racelab compare` (ci = false) and `racelab ci` (ci = true): run the
// catalogue, write the report, print the verdicts. The two differ in their
// defaults (budgets, minimisation, output folder); both exit 1 when an
// expectation failed, and ci also when one is incomplete.
int run_catalogue(bool ci, int argc, char** argv);

// Prints the verdict table and where the report went; returns the exit code:
// kExitInterrupted when interrupted, kExitExpectationFailed when an
// expectation failed (with `ci`, also when one is incomplete; `strict`, merge
// --ci, also for a shard's undecided ones), otherwise kExitOk.
int print_campaign(const nlohmann::json& report, const reports::ReportFiles& files, const std::string& results,
                   bool ci, bool interrupted, bool strict = false);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_CAMPAIGN_COMMAND_H_
