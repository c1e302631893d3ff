// results.jsonl: append-per-trial writing, tolerant reading of a killed file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixtures.h"
#include "campaign/results_log.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;

json header() { return {{"format", kResultsFormat}, {"version", kResultsVersion}, {"scenarios", json::array()}}; }

TEST(ResultsLog, RoundTripsTrialsCellsAndEnd) {
  const auto dir = testing::make_temp_dir();
  const std::string path = dir + "/results.jsonl";
  {
    ResultsWriter w(path, header());
    w.trial(testing::record("none", "random", 2, 0, "error", "/x.json", 3), 7);
    // Flushed per trial: a reader sees it before the writer closes.
    ResultsData mid;
    read_results(path, &mid);
    EXPECT_EQ(mid.trials.size(), 1u);
    CellSpec spec;
    spec.scenario = "toy_leak";
    CellSummary sum;
    sum.trials = 1;
    sum.failures = 1;
    w.cell(spec, sum, false);
    w.end(false, 1.25);
  }
  ResultsData d;
  read_results(path, &d);
  ASSERT_EQ(d.trials.size(), 1u);
  EXPECT_EQ(d.trials[0].outcome, "error");
  EXPECT_EQ(d.trials[0].schedule_file, "/x.json");
  EXPECT_EQ(d.trials[0].preemptions, 3);
  ASSERT_EQ(d.cell_seeds.size(), 1u);
  EXPECT_EQ(d.cell_seeds[0], 7u);  // the cell's seed, not the trial's
  ASSERT_EQ(d.cells.size(), 1u);
  EXPECT_EQ(d.cells[0]["failures"], 1);
  ASSERT_EQ(d.ends.size(), 1u);
  EXPECT_TRUE(d.warnings.empty());
}

TEST(ResultsLog, AFolderMovedWholeStillFindsItsSchedules) {
  // A CI job writes its folder; another machine downloads and merges it.
  namespace fs = std::filesystem;
  const auto dir = testing::make_temp_dir();
  const std::string written = dir + "/ci-job/out", moved = dir + "/downloads/out";
  fs::create_directories(written + "/schedules/cell");
  const std::string schedule = written + "/schedules/cell/trial0-error.json";
  std::ofstream(schedule) << "{}";
  {
    ResultsWriter w(written + "/results.jsonl", header());
    w.trial(testing::record("none", "random", 2, 0, "error", schedule, 1), 1);
    CellSpec spec;
    spec.scenario = "toy_leak";
    CellSummary sum;
    sum.trials = sum.failures = 1;
    sum.first_failure_schedule = schedule;
    const json c = w.cell(spec, sum, false);
    EXPECT_EQ(c["first_failure_schedule"], schedule) << "what read_results gives back, from where it was written";
    w.end(false, 1.0);
  }
  std::stringstream text;
  text << std::ifstream(written + "/results.jsonl").rdbuf();
  EXPECT_EQ(text.str().find(written), std::string::npos) << "no absolute path to the folder:\n" << text.str();
  fs::create_directories(dir + "/downloads");
  fs::rename(written, moved);
  ResultsData d;
  read_results(moved + "/results.jsonl", &d);
  ASSERT_EQ(d.trials.size(), 1u);
  ASSERT_EQ(d.cells.size(), 1u);
  const std::string found = moved + "/schedules/cell/trial0-error.json";
  EXPECT_EQ(d.trials[0].schedule_file, found);
  EXPECT_EQ(d.cells[0]["first_failure_schedule"], found);
  EXPECT_TRUE(fs::exists(d.trials[0].schedule_file));
}

TEST(ResultsLog, AScheduleOutsideItsFolderIsNamedInFull) {
  // --schedule-dir elsewhere: a relative path would break when the results move alone.
  const auto dir = testing::make_temp_dir();
  const std::string outside = dir + "/elsewhere/x.json";
  std::filesystem::create_directories(dir + "/out");
  {
    ResultsWriter w(dir + "/out/results.jsonl", header());
    w.trial(testing::record("none", "random", 2, 0, "error", outside, 1), 1);
  }
  std::stringstream text;
  text << std::ifstream(dir + "/out/results.jsonl").rdbuf();
  EXPECT_NE(text.str().find("\"" + outside + "\""), std::string::npos) << text.str();
  ResultsData d;
  read_results(dir + "/out/results.jsonl", &d);
  ASSERT_EQ(d.trials.size(), 1u);
  EXPECT_EQ(d.trials[0].schedule_file, outside);
}

TEST(ResultsLog, SkipsATornLastLineWithAWarning) {
  const auto dir = testing::make_temp_dir();
  const std::string path = dir + "/results.jsonl";
  {
    ResultsWriter w(path, header());
    w.trial(testing::record("none", "random", 2, 0, "holds"), 1);
  }
  std::ofstream(path, std::ios::app) << R"({"trial": {"scenario": "toy_le)";
  ResultsData d;
  read_results(path, &d);
  EXPECT_EQ(d.trials.size(), 1u);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_NE(d.warnings[0].find(":3: skipped a torn last line"), std::string::npos) << d.warnings[0];
  // ... and its writer never wrote an end record: the file counts as interrupted.
  EXPECT_NE(d.warnings[1].find(path + ":4: no end record"), std::string::npos) << d.warnings[1];
  EXPECT_EQ(d.unfinished, std::vector<std::string>{path});
}

TEST(ResultsLog, AFileWithNoEndRecordIsUnfinishedEvenBesideOneWithTwo) {
  const auto dir = testing::make_temp_dir();
  const std::string done = dir + "/done.jsonl", cut = dir + "/cut.jsonl";
  {
    ResultsWriter w(done, header());
    w.end(false, 1.0);
  }
  std::ofstream(done, std::ios::app) << R"({"end": {"interrupted": false, "wall_s": 1}})" << "\n";
  {
    ResultsWriter w(cut, header());
    w.trial(testing::record("none", "random", 2, 0, "holds"), 1);
  }
  ResultsData d;
  read_results(done, &d);
  read_results(cut, &d);
  EXPECT_EQ(d.ends.size(), d.headers.size());  // counting end records alone would call this finished
  EXPECT_EQ(d.unfinished, std::vector<std::string>{cut});
}

TEST(ResultsLog, ADirectoryIsADirectory) {
  const auto dir = testing::make_temp_dir();
  ResultsData d;
  try {
    read_results(dir, &d);
    FAIL() << "read a directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + ": is a directory"), std::string::npos) << e.what();
  }
}

TEST(ResultsLog, ACorruptLineInTheMiddleIsNotCalledTorn) {
  const auto dir = testing::make_temp_dir();
  const std::string path = dir + "/results.jsonl";
  {
    ResultsWriter w(path, header());
    w.trial(testing::record("none", "random", 2, 0, "holds"), 1);
  }
  std::ofstream(path, std::ios::app) << "garbage\n" << R"({"end": {"interrupted": false, "wall_s": 1}})" << "\n";
  ResultsData d;
  read_results(path, &d);
  EXPECT_EQ(d.ends.size(), 1u);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find(":3: skipped a line that is not a results record"), std::string::npos)
      << d.warnings[0];
}

TEST(ResultsLog, RejectsAFileThatIsNotResults) {
  const auto dir = testing::make_temp_dir();
  const std::string path = dir + "/other.jsonl";
  std::ofstream(path) << R"({"hello": 1})" << "\n";
  ResultsData d;
  try {
    read_results(path, &d);
    FAIL() << "accepted a non-results file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":1"), std::string::npos);
  }
}

// A header whose fields have the wrong JSON types (found by the results fuzzer:
// a numeric "format" made json::value() throw a type_error that escaped) is
// refused like any other non-results file, naming the file and line.
TEST(ResultsLog, RejectsAHeaderWhoseFieldsHaveTheWrongTypes) {
  const auto dir = testing::make_temp_dir();
  for (const char* header : {R"({"campaign": {"format": 1}})", R"({"campaign": {"format": "racelab-results", "version": "1"}})",
                             R"({"campaign": {"format": "racelab-results"}})"}) {
    const std::string path = dir + "/typed.jsonl";
    std::ofstream(path) << header << "\n";
    ResultsData d;
    try {
      read_results(path, &d);
      FAIL() << "accepted " << header;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ":1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace racelab::reports
