// cli/campaign_runner.h -- what the campaign commands (validate, compare, ci,
// merge) share: loading scenario files against the workload registry, local
// shards, and printing a campaign's verdicts. The work itself lives in
// reports/ and reports/campaign/.
#ifndef RACELAB_CLI_CAMPAIGN_RUNNER_H_
#define RACELAB_CLI_CAMPAIGN_RUNNER_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/campaign/scenario.h"
#include "reports/report.h"

namespace racelab::cli {

// The catalogue a command uses when given none: ./scenarios when it exists,
// else the source tree's.
std::string default_catalogue();

// Loads and validates scenario files or directories against the registered
// workloads. Prints every problem; sets *rc to kExitBadInput on any problem or
// when nothing was given. `check_workloads` false: the files' own schema only,
// without asking the registry -- for a command that reads expectations and
// runs nothing (explain), so the lean binary need not hand it to the LibTorch
// part (cli/torch_part.h).
// `torch` ("2.14.1" or "2.14"; "" for none) picks each scenario's knobs_by_torch
// and expectations_by_torch entries.
std::vector<reports::Scenario> load_catalogue(const std::vector<std::string>& paths, int* rc,
                                              bool check_workloads = true, const std::string& torch = "");

// The torch version a campaign over `paths` judges by: *torch as given
// (--torch; kExitUsage unless it reads major.minor[.rest]); else, when a
// scenario among `paths` runs on real torch and a Python is set (--python,
// $RACELAB_PYTHON), that Python's torch.__version__ -- kExitBadInput, naming
// the command, when it cannot import torch; else none (""). `cmd` names the
// command in messages.
int resolve_torch_version(const std::string& cmd, const std::vector<std::string>& paths, std::string* torch);

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

// The report built from results files; null when none has a header. Read
// problems go to *errors.
nlohmann::json rebuild_report(const std::vector<std::string>& results_files, std::vector<std::string>* errors);

}  // namespace racelab::cli

#endif  // RACELAB_CLI_CAMPAIGN_RUNNER_H_
