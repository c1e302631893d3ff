// cli/cli_util.h -- helpers shared by the engine's subcommands (run, reproduce,
// replay, minimize): knob flags, the trial runner, result printing.
#ifndef RACELAB_CLI_CLI_UTIL_H_
#define RACELAB_CLI_CLI_UTIL_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cell.h"
#include "engine/minimize.h"

namespace racelab {
namespace cli {

// "k=v" flags -> an object; v is parsed as JSON when it is JSON, else a string.
// Throws std::invalid_argument naming the bad flag.
nlohmann::json parse_knobs(const std::vector<std::string>& flags);

// Supervised (a worker process) unless in_process.
TrialRunner make_runner(bool in_process, double timeout_s);

void print_summary(const CellSpec& spec, const CellSummary& sum);

}  // namespace cli
}  // namespace racelab

#endif  // RACELAB_CLI_CLI_UTIL_H_
