// campaign/scenario_exec.h -- scenarios over a user's own program: the
// "exec" section of a scenario whose workload is "exec" (scenarios/SCHEMA.md).
//
//   "workload": "exec",
//   "exec": {"commands": {"none":  ["./lost_update"],
//                         "fixed": ["./lost_update_fixed"]},
//            "env": {"MYPROG_LOCK": "{mitigation}"},
//            "fail_on_output": "mismatch", "expect_exit": 0,
//            "let_go_ms": 100, "fork_server": true}
//
// Each mitigation is a variant of the program: `commands[m]`, or else the
// shared `command` (one program with a mitigation flag); `env` is added to
// every variant's environment. In every argument and environment value
// "{mitigation}" becomes the mitigation's name and "{threads}" the cell's
// thread count. A program named with a slash is relative to the scenario
// file's directory; a bare name is searched on PATH, as a shell would.
//
// The engine's "exec" workload (engine/exec_host.h) then runs each cell: it
// resolves the program, records its size and hash (program_id) and judges
// the trials like `racelab exec` does, so expectations, reports, schedules
// and replays need nothing of their own.
//
// A user's own Python script is the same idea ("workload": "pyrun", the
// engine's python_script, run as `racelab pyrun` runs it):
//
//   "workload": "pyrun",
//   "pyrun": {"commands": {"none":     ["train.py"],
//                          "lock_all": ["train.py", "--fix", "lock_all"]},
//             "fail_on_output": "mismatch", "expect_exit": 0,
//             "let_go_cpu_ms": 200, "points": ["lines:train"]}
//
// A script path is relative to the scenario file and becomes one relative to
// racelab's working directory (the Python's, ci/in-torch-root's /src, when
// racelab runs from the repository root): no absolute path is recorded. The
// cell's knobs record the script's id (SIZE:FNV1A64), so a schedule names the
// script it was made for.
#ifndef RACELAB_CAMPAIGN_SCENARIO_EXEC_H_
#define RACELAB_CAMPAIGN_SCENARIO_EXEC_H_

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/scenario.h"

namespace racelab::campaign {

inline constexpr const char* kExecScenarioWorkload = "exec";
inline constexpr const char* kPyrunScenarioWorkload = "pyrun";
// The engine workload a scenario's "workload" names: python_script for "pyrun".
std::string engine_workload(const std::string& scenario_workload);

// Problems of doc["exec"] or doc["pyrun"] (and of a "knobs" beside it), each via `add(path,
// found, expected)`. With `info` (the registry's "exec" workload) every
// variant's program is also checked: there, runnable, dynamically linked.
using AddProblem = std::function<void(const std::string& path, const std::string& found, const std::string& expected)>;
void check_exec_section(const nlohmann::json& doc, const std::string& file, const std::vector<std::string>& mitigations,
                        const WorkloadInfo* info, const AddProblem& add);

// The "exec" workload's knobs for one cell of `s` (a validated exec scenario):
// the variant's command with {mitigation} and {threads} substituted and its
// program's path made absolute when it names a folder. No file is touched:
// reports rebuilt elsewhere plan the same cells.
nlohmann::json exec_cell_knobs(const Scenario& s, const std::string& mitigation, int threads);
// The same for a "pyrun" scenario: the python_script workload's knobs.
nlohmann::json pyrun_cell_knobs(const Scenario& s, const std::string& mitigation, int threads);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_SCENARIO_EXEC_H_
