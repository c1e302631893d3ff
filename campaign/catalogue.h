// campaign/catalogue.h -- which scenario files a campaign runs, loaded and
// checked against the registered workloads (racelab/workload.h).
//
//   int rc = kExitOk;
//   auto scenarios = load_catalogue({default_catalogue()}, &rc, libtorch_version);
//   if (rc != kExitOk) return rc;  // every problem is printed, by file and field
#ifndef RACELAB_CAMPAIGN_CATALOGUE_H_
#define RACELAB_CAMPAIGN_CATALOGUE_H_

#include <string>
#include <vector>

#include "campaign/scenario.h"

namespace racelab::campaign {

// The catalogue a command uses when given none: ./scenarios when it exists;
// else the catalogue installed beside this binary (PREFIX/bin/racelab reads
// PREFIX/share/racelab/scenarios, wherever the prefix was moved); else the
// source tree this binary was built from.
std::string default_catalogue();

// Loads and validates scenario files or directories against the registered
// workloads. Prints every problem; sets *rc to kExitBadInput on any problem or
// when nothing was given.
//  - `libtorch` ("2.6.0"): the LibTorch the trials run on, which picks each
//    scenario's expectations_by_libtorch entry.
//  - `check_workloads` false: the files' own schema only, without asking the
//    registry -- for a command that reads expectations and runs nothing
//    (explain), so the lean binary need not hand it to the LibTorch part.
//  - `torch` ("2.14.1" or "2.14"; "" for none) picks each scenario's
//    knobs_by_torch and expectations_by_torch entries.
std::vector<Scenario> load_catalogue(const std::vector<std::string>& paths, int* rc, const std::string& libtorch,
                                     bool check_workloads = true, const std::string& torch = "");

// The torch version a campaign over `paths` judges by: *torch as given
// (--torch; kExitUsage unless it reads major.minor[.rest]); else, when a
// scenario among `paths` runs on real torch and a Python is set (--python,
// $RACELAB_PYTHON), that Python's torch.__version__ -- kExitBadInput, naming
// the command, when it cannot import torch; else none (""). `cmd` names the
// command in messages.
int resolve_torch_version(const std::string& cmd, const std::vector<std::string>& paths, std::string* torch);

// A --torch value as every command takes it (compare, ci, explain): kExitOk
// when empty or major.minor[.rest], else prints why, naming `cmd`, and
// returns kExitUsage.
int check_torch_flag(const std::string& cmd, const std::string& torch);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_CATALOGUE_H_
