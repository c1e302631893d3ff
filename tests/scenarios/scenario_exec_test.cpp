// Scenarios over a user's own program (workload "exec", campaign/scenario_exec.h):
// the "exec" section's validation and the knobs each cell runs with. The
// programs themselves are checked against the registry by `racelab validate`
// (tests/programs/scenario_check.sh); here no file is looked at.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "campaign/matrix.h"
#include "campaign/scenario.h"
#include "campaign/scenario_exec.h"
#include "tests/scenarios/problem_matchers.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;
using test_support::all;
using test_support::has;

json exec_doc() {
  return json::parse(R"({
    "format": "racelab-scenario", "version": 1, "name": "mine", "description": "my program and its fix",
    "workload": "exec", "threads": [1],
    "exec": {"commands": {"none": ["./prog", "--rounds", "3"], "fixed": ["./prog_fixed"]},
             "fail_on_output": "mismatch", "let_go_ms": 500},
    "strategies": [{"strategy": "pct:2", "trials": 50}],
    "mitigations": ["none", "fixed"],
    "expectations": {"none": {"reproduces_within": 50, "outcome": "error"},
                     "fixed": {"holds_over": 50}}})");
}

TEST(ScenarioExec, AcceptsVariantsByMitigationAndPlansTheirCommands) {
  const auto ps = validate_scenario(exec_doc(), "/cat/mine.json");
  ASSERT_TRUE(ps.empty()) << all(ps);
  const Scenario s = parse_scenario(exec_doc(), "/cat/mine.json");
  const auto cells = plan_cells({s}, {});
  ASSERT_EQ(cells.size(), 2u);
  // Relative to the scenario file, with the judging options beside it.
  EXPECT_EQ(cells[0].spec.workload, "exec");
  EXPECT_EQ(cells[0].spec.mitigation, "none");
  EXPECT_EQ(cells[0].spec.knobs["argv"], json({"/cat/prog", "--rounds", "3"}));
  EXPECT_EQ(cells[0].spec.knobs["fail_on_output"], "mismatch");
  EXPECT_EQ(cells[0].spec.knobs["let_go_ms"], 500);
  EXPECT_FALSE(cells[0].spec.knobs.contains("program_id"));  // the engine fills it in when the cell runs
  EXPECT_EQ(cells[1].spec.mitigation, "fixed");
  EXPECT_EQ(cells[1].spec.knobs["argv"], json({"/cat/prog_fixed"}));
}

TEST(ScenarioExec, OneCommandWithTheMitigationAndThreadsSubstituted) {
  json d = exec_doc();
  d["exec"] = json::parse(R"({"command": ["myprog", "--mode={mitigation}", "-t", "{threads}"]})");
  d["threads"] = {2, 4};
  ASSERT_TRUE(validate_scenario(d, "rel/mine.json").empty()) << all(validate_scenario(d, "rel/mine.json"));
  const auto cells = plan_cells({parse_scenario(d, "rel/mine.json")}, {});
  ASSERT_EQ(cells.size(), 4u);
  // A bare name stays a name: the engine searches PATH for it.
  EXPECT_EQ(cells[1].spec.knobs["argv"], json({"myprog", "--mode=none", "-t", "4"}));
  EXPECT_EQ(cells[3].spec.knobs["argv"], json({"myprog", "--mode=fixed", "-t", "4"}));
  EXPECT_EQ(cells[3].spec.threads, 4);
}

TEST(ScenarioExec, EnvironmentValuesTakeTheMitigationToo) {
  json d = exec_doc();
  d["exec"]["env"] = {{"MYPROG_LOCK", "{mitigation}"}, {"LD_PRELOAD", "/opt/lib/libpoints.so"}};
  ASSERT_TRUE(validate_scenario(d, "/cat/mine.json").empty()) << all(validate_scenario(d, "/cat/mine.json"));
  const auto cells = plan_cells({parse_scenario(d, "/cat/mine.json")}, {});
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].spec.knobs["env"], json({{"MYPROG_LOCK", "none"}, {"LD_PRELOAD", "/opt/lib/libpoints.so"}}));
  EXPECT_EQ(cells[1].spec.knobs["env"]["MYPROG_LOCK"], "fixed");
  d["exec"]["env"] = {{"MYPROG_LOCK", 1}};
  EXPECT_TRUE(has(validate_scenario(d, "f.json"), "$.exec.env", "NAME -> VALUE of strings"));
}

TEST(ScenarioExec, EveryProblemNamesItsPath) {
  json d = exec_doc();
  d["exec"]["commands"].erase("fixed");
  d["exec"]["commands"]["fixd"] = {"./prog_fixed"};
  d["exec"]["expect_exit"] = 300;
  d["exec"]["fail_on_output"] = "(";
  d["exec"]["let_go"] = 5;
  d["knobs"] = {{"argv", {"x"}}};
  const auto ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.exec.commands.fixed", "a command for every listed mitigation")) << all(ps);
  EXPECT_TRUE(has(ps, "$.exec.commands.fixd", "a mitigation listed in $.mitigations")) << all(ps);
  EXPECT_TRUE(has(ps, "$.exec.expect_exit", "from 0 to 255")) << all(ps);
  EXPECT_TRUE(has(ps, "$.exec.fail_on_output", "a regular expression")) << all(ps);
  EXPECT_TRUE(has(ps, "$.exec.let_go", "one of")) << all(ps);
  EXPECT_TRUE(has(ps, "$.knobs", "go in $.exec")) << all(ps);
}

TEST(ScenarioExec, CommandsMustBeProgramsWithArguments) {
  json d = exec_doc();
  d["exec"]["commands"]["none"] = json::array();
  d["exec"]["commands"]["fixed"] = "./prog_fixed";
  auto ps = validate_scenario(d, "f.json");
  EXPECT_TRUE(has(ps, "$.exec.commands.none", "a non-empty array of strings")) << all(ps);
  EXPECT_TRUE(has(ps, "$.exec.commands.fixed", "a non-empty array of strings")) << all(ps);
  d = exec_doc();
  d.erase("exec");
  EXPECT_TRUE(has(validate_scenario(d, "f.json"), "$.exec", "the programs to run"));
}

TEST(ScenarioExec, AThreadSweepNeedsACommandThatTakesIt) {
  json d = exec_doc();
  d["threads"] = {1, 2};
  EXPECT_TRUE(has(validate_scenario(d, "f.json"), "$.threads", "no command uses \"{threads}\""));
}

TEST(ScenarioExec, MitigationsAreTheUsersOwnNamesButNameFiles) {
  json d = exec_doc();
  d["mitigations"] = {"none", "Fixed Build"};
  d["expectations"] = {{"none", d["expectations"]["none"]}, {"Fixed Build", {{"holds_over", 10}}}};
  d["exec"]["commands"] = {{"none", {"./a"}}, {"Fixed Build", {"./b"}}};
  EXPECT_TRUE(has(validate_scenario(d, "f.json"), "$.mitigations[1]", "lower-case letters"));
}

TEST(ScenarioExec, AnExecSectionOnlyWithTheExecWorkload) {
  json d = exec_doc();
  d["workload"] = "toy";
  EXPECT_TRUE(has(validate_scenario(d, "f.json"), "$.exec", "only with \"workload\": \"exec\""));
}

// A user's own Python script (workload "pyrun"): the same variants, run as
// the engine's python_script, with the script path made relative to the
// working directory (where the Python finds it), never absolute.
json pyrun_doc() {
  return json::parse(R"({
    "format": "racelab-scenario", "version": 1, "name": "mine_py", "description": "my script and its fix",
    "workload": "pyrun", "threads": [1],
    "pyrun": {"command": ["train.py", "--fix", "{mitigation}"], "let_go_cpu_ms": 500, "points": ["lines:train"]},
    "strategies": [{"strategy": "auto+os", "trials": 20}],
    "mitigations": ["none", "lock_all"],
    "expectations": {"none": {"reproduces_within": 10}, "lock_all": {"holds_over": 20}}})");
}

TEST(ScenarioPyrun, PlansPythonScriptCellsWithScriptsRelativeToTheWorkingDirectory) {
  namespace fs = std::filesystem;
  const std::string file = (fs::current_path() / "cat" / "mine_py.json").string();
  const auto ps = validate_scenario(pyrun_doc(), file);
  ASSERT_TRUE(ps.empty()) << all(ps);
  const auto cells = plan_cells({parse_scenario(pyrun_doc(), file)}, {});
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].spec.workload, "python_script");
  EXPECT_EQ(cells[1].spec.mitigation, "lock_all");
  EXPECT_EQ(cells[1].spec.knobs["script"], "cat/train.py");
  EXPECT_EQ(cells[1].spec.knobs["args"], json({"--fix", "lock_all"}));
  EXPECT_EQ(cells[1].spec.knobs["let_go_cpu_ms"], 500);
  EXPECT_EQ(cells[1].spec.knobs["points"], json({"lines:train"}));
  EXPECT_FALSE(cells[1].spec.knobs.contains("script_id"));  // no such file here: nothing to hash
}

TEST(ScenarioPyrun, ProblemsNameTheirPath) {
  json d = pyrun_doc();
  d["pyrun"]["fork_server"] = false;  // exec's, not pyrun's
  d["pyrun"]["points"] = "lines:train";
  d["exec"] = {{"command", {"./prog"}}};
  d["knobs"] = {{"steps", 2}};
  const auto ps = validate_scenario(d, "mine_py.json");
  EXPECT_TRUE(has(ps, "$.pyrun.fork_server", "one of")) << all(ps);
  EXPECT_TRUE(has(ps, "$.exec", "only with \"workload\": \"exec\"")) << all(ps);
  EXPECT_TRUE(has(ps, "$.knobs", "no knobs with workload pyrun")) << all(ps);
  json e = pyrun_doc();
  e["pyrun"]["points"] = "lines:train";
  EXPECT_TRUE(has(validate_scenario(e, "mine_py.json"), "$.pyrun.points", "an array of strings"))
      << all(validate_scenario(e, "mine_py.json"));
  json f = pyrun_doc();
  f["pyrun"].erase("command");
  EXPECT_TRUE(has(validate_scenario(f, "mine_py.json"), "$.pyrun.commands.none", "a command for every"))
      << all(validate_scenario(f, "mine_py.json"));
}

}  // namespace
}  // namespace racelab::reports
