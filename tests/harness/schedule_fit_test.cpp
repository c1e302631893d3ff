// engine/schedule_fit.h: a schedule replays only the workload and the program
// it was made for; one naming no program, or another, only with any_program,
// which says so. Every path that replays uses this one check: run_cell's
// replay:FILE strategy and minimize() refuse before their first trial.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "engine/cell.h"
#include "engine/exec_host.h"
#include "engine/python_host.h"
#include "engine/minimize.h"
#include "engine/schedule.h"
#include "engine/schedule_fit.h"

using racelab::Schedule;
using racelab::ScheduleError;
using nlohmann::json;

namespace {

// A workload whose program lives outside racelab: its knob "here" says which
// program is on this machine now, "id" what a schedule recorded.
const racelab::ProgramIdentityRegistrar kFitIdentity{
    "t_fit_outside",
    {"id", [](const json& knobs) { return knobs.value("here", std::string()); },
     [](const json&) { return std::string("program ./outside"); }}};

Schedule outside(const json& knobs) {
  Schedule s;
  s.workload = "t_fit_outside";
  s.knobs = knobs;
  return s;
}

}  // namespace

TEST(ScheduleFit, ACatalogueScheduleFitsOnlyItsOwnWorkload) {
  Schedule s;
  s.workload = "t_flag";
  EXPECT_EQ(racelab::check_schedule_fits(s, "f.json", "t_flag", json::object(), false), "");
  try {
    racelab::check_schedule_fits(s, "f.json", "t_deadlock", json::object(), /*any_program=*/true);
    FAIL() << "a schedule of another workload was let through";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: a schedule of workload 't_flag', but this run is of 't_deadlock'"),
              std::string::npos)
        << e.what();
  }
}

TEST(ScheduleFit, TheSameProgramFits) {
  EXPECT_EQ(racelab::check_schedule_fits(outside({{"id", "7:ab"}}), "f.json", "t_fit_outside", {{"here", "7:ab"}},
                                         false),
            "");
}

TEST(ScheduleFit, NoProgramIdentityReplaysOnlyWithAnyProgramAndAWarning) {
  for (const json& knobs : {json::object(), json{{"id", ""}}, json{{"id", 5}}}) {
    const Schedule s = outside(knobs);
    try {
      racelab::check_schedule_fits(s, "f.json", "t_fit_outside", {{"here", "7:ab"}}, false);
      FAIL() << "replayed with no identity: " << knobs.dump();
    } catch (const ScheduleError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("f.json: records no program identity (id)"), std::string::npos) << what;
      EXPECT_NE(what.find("--any-program"), std::string::npos) << what;
    }
    const std::string warning = racelab::check_schedule_fits(s, "f.json", "t_fit_outside", {{"here", "7:ab"}}, true);
    EXPECT_NE(warning.find("records no program identity"), std::string::npos) << warning;
  }
}

TEST(ScheduleFit, AnotherProgramReplaysOnlyWithAnyProgramAndAWarning) {
  const Schedule s = outside({{"id", "7:ab"}});
  try {
    racelab::check_schedule_fits(s, "f.json", "t_fit_outside", {{"here", "9:cd"}}, false);
    FAIL() << "replayed against another program";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("not the program this was made for (recorded id 7:ab, this one is 9:cd)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(racelab::check_schedule_fits(s, "f.json", "t_fit_outside", {{"here", "9:cd"}}, true), "");
  // Let through, it records the program it now runs against.
  Schedule adopted = outside({{"id", "7:ab"}, {"here", "9:cd"}});
  racelab::adopt_program(&adopted);
  EXPECT_EQ(adopted.knobs["id"], "9:cd");
}

TEST(ScheduleFit, AReplayStrategyOfAnotherWorkloadRunsNoTrial) {
  Schedule s;
  s.workload = "t_flag";
  s.threads = 2;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fit-" + std::to_string(::getpid()) + ".json")).string();
  racelab::save_schedule(s, path);
  racelab::CellSpec c;
  c.workload = "t_deadlock";
  c.strategy = "replay:" + path;
  c.supervised = false;
  c.max_trials = 3;
  int trials = 0;
  EXPECT_THROW(racelab::run_cell(c, [&](const racelab::TrialRecord&) { ++trials; }), ScheduleError);
  EXPECT_EQ(trials, 0);
  std::filesystem::remove(path);
}

TEST(ScheduleFit, MinimizeRefusesAnotherProgramBeforeItsFirstTrial) {
  int trials = 0;
  const auto count = [&](const racelab::TrialSpec&) {
    ++trials;
    return racelab::TrialResult{};
  };
  EXPECT_THROW(racelab::minimize(outside({{"id", "7:ab"}, {"here", "9:cd"}}), count), ScheduleError);
  EXPECT_THROW(racelab::minimize(outside({{"here", "9:cd"}}), count), ScheduleError);
  EXPECT_EQ(trials, 0);
}

// racelab pyrun's schedules: the script is the program, named by script_id,
// the size and hash of the file as racelab reads it.
TEST(ScheduleFit, AScriptScheduleReplaysOnlyTheScriptItWasMadeFor) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fit-script-" + std::to_string(::getpid()) + ".py")).string();
  auto write = [&](const char* text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text, f);
    std::fclose(f);
  };
  write("import threading\nprint('one')\n");
  Schedule s;
  s.workload = racelab::kPythonScriptWorkload;
  s.knobs = {{"script", path}, {"args", json::array()}, {"script_id", racelab::program_id(path)}};
  EXPECT_EQ(racelab::check_schedule_fits(s, "s.json", s.workload, s.knobs, false), "");

  write("import threading\nprint('two, edited')\n");
  try {
    racelab::check_schedule_fits(s, "s.json", s.workload, s.knobs, false);
    FAIL() << "a schedule replayed against an edited script";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("script " + path + ": not the program this was made for"), std::string::npos)
        << e.what();
  }
  EXPECT_NE(racelab::check_schedule_fits(s, "s.json", s.workload, s.knobs, true).find("made for another program"),
            std::string::npos);

  s.knobs.erase("script_id");  // written by hand: no identity
  EXPECT_THROW(racelab::check_schedule_fits(s, "s.json", s.workload, s.knobs, false), ScheduleError);
  std::filesystem::remove(path);
}
