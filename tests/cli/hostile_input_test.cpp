// Hostile input on the surfaces of issue 30, each a reproducer that gave a
// false or late answer before: a schedule replayed in a run of another
// workload, merge of a torn or unfinished shard and of a directory, scenario
// files with a key twice or absurd budgets, and an output folder that cannot
// be made, found only after the trials had run. (Exec programs:
// tests/programs/hostile_input.sh.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "racelab_cli.h"

namespace {

using racelab::testing::racelab;
using racelab::testing::ScratchDir;

// A scenario of two cells (threads 2 and 3), run in-process: direct_leak under
// global_lock, which holds.
std::string two_cells() {
  return R"({"format": "racelab-scenario", "version": 1, "name": "tiny", "description": "d",
    "workload": "direct_leak", "threads": [2, 3], "supervised": false,
    "strategies": [{"strategy": "random", "trials": 2}],
    "mitigations": ["global_lock"], "expectations": {"global_lock": {"holds_over": 2}}})";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs both shards of two_cells() into DIR/s; returns the two results files.
std::pair<std::string, std::string> two_shards(const ScratchDir& dir) {
  const std::string file = dir.write("tiny.json", two_cells());
  for (const char* shard : {"1/2", "2/2"}) {
    const auto r = racelab("ci " + file + " --shard " + shard + " --out " + dir.file("s"));
    EXPECT_EQ(r.code, 0) << r.output;
  }
  return {dir.file("s/results-shard-1-of-2.jsonl"), dir.file("s/results-shard-2-of-2.jsonl")};
}

size_t line_count(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(HostileInput, MergeNamesATornEndRecordAndCountsTheShardInterrupted) {
  ScratchDir dir;
  const auto [one, two] = two_shards(dir);
  std::string text = slurp(two);
  const size_t lines = line_count(text);
  ASSERT_NE(text.rfind("{\"end\""), std::string::npos) << text;
  text.resize(text.size() - 6);  // the end record, cut mid-line
  std::ofstream(two, std::ios::trunc) << text;
  const auto r = racelab("merge " + one + " " + two + " --out " + dir.file("m"));
  EXPECT_NE(r.output.find(two + ":" + std::to_string(lines) + ": skipped a torn last line"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(two + ":" + std::to_string(lines + 1) + ": no end record"), std::string::npos) << r.output;
  const auto report = nlohmann::json::parse(slurp(dir.file("m/report.json")));
  EXPECT_TRUE(report["campaign"]["interrupted"].get<bool>()) << r.output;
}

TEST(HostileInput, MergeCountsAShardWithNoEndRecordInterruptedEvenBesideOneWithTwo) {
  ScratchDir dir;
  const auto [one, two] = two_shards(dir);
  std::string text = slurp(two);
  const std::string end_line = text.substr(text.rfind("{\"end\""));
  text.resize(text.rfind("{\"end\""));  // killed before its end record
  std::ofstream(two, std::ios::trunc) << text;
  std::ofstream(one, std::ios::app) << end_line;  // ... while shard 1 has one end too many
  const auto r = racelab("merge " + one + " " + two + " --out " + dir.file("m"));
  EXPECT_NE(r.output.find(two + ":" + std::to_string(line_count(text) + 1) + ": no end record"), std::string::npos)
      << r.output;
  const auto report = nlohmann::json::parse(slurp(dir.file("m/report.json")));
  EXPECT_TRUE(report["campaign"]["interrupted"].get<bool>()) << r.output;
}

TEST(HostileInput, MergeOfADirectorySaysItIsADirectory) {
  ScratchDir dir;
  const auto [one, two] = two_shards(dir);
  const auto r = racelab("merge " + one + " " + dir.file("s") + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(dir.file("s") + ": is a directory"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("empty results file"), std::string::npos) << r.output;
}

// A scenario whose text is `body` with one strategy budget `budget`.
std::string scenario_with(const std::string& budget, const std::string& extra = "") {
  return R"({"format": "racelab-scenario", "version": 1, "name": "tiny", "description": "d",
  "workload": "direct_leak", "threads": [2], )" + extra + R"(
  "strategies": [)" + budget + R"(],
  "mitigations": ["global_lock"], "expectations": {"global_lock": {"holds_over": 2}}})";
}

TEST(HostileInput, ValidateRefusesAKeyTwiceNamingBothPlaces) {
  ScratchDir dir;
  const std::string file =
      dir.write("dup.json", scenario_with("{\"strategy\": \"random\",\n    \"trials\": 2, \"trials\": 5000}"));
  const auto r = racelab("validate " + file);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(file + ": $.strategies[0].trials: found the key \"trials\" twice: line 4, column 5 and "
                                 "line 4, column 18"),
            std::string::npos)
      << r.output;
  // The same key in two different objects is fine.
  const std::string fine = dir.write("fine.json", scenario_with(R"({"strategy": "random", "trials": 2})"));
  EXPECT_EQ(racelab("validate " + fine).code, 0);
}

TEST(HostileInput, ValidateRangeChecksCountsAndTimes) {
  ScratchDir dir;
  struct Case {
    std::string budget, extra, path;
  } cases[] = {
      {R"({"strategy": "random", "trials": 2, "seconds": 1e308})", "", "$.strategies[0].seconds"},
      {R"({"strategy": "random", "trials": 2, "seconds": 604801})", "", "$.strategies[0].seconds"},
      {R"({"strategy": "random", "trials": 1000000001})", "", "$.strategies[0].trials"},
      {R"({"strategy": "random", "trials": 18446744073709551615})", "", "$.strategies[0].trials"},
      {R"({"strategy": "random", "trials": 2})", R"("trial_timeout_s": 1e308,)", "$.trial_timeout_s"},
  };
  for (const auto& c : cases) {
    const std::string file = dir.write("big.json", scenario_with(c.budget, c.extra));
    const auto r = racelab("validate " + file);
    EXPECT_EQ(r.code, 3) << c.budget << c.extra << ":\n" << r.output;
    EXPECT_NE(r.output.find(file + ": " + c.path + ": found"), std::string::npos) << r.output;
  }
  // A number beyond a double is invalid JSON (it was an internal error, exit 70).
  const std::string huge = dir.write("huge.json", scenario_with(R"({"strategy": "random", "trials": 2, "seconds": 1e999999})"));
  auto h = racelab("validate " + huge);
  EXPECT_EQ(h.code, 3) << h.output;
  EXPECT_NE(h.output.find(huge + ": $: found invalid JSON"), std::string::npos) << h.output;
  // The largest values allowed still validate.
  const std::string file = dir.write(
      "max.json", scenario_with(R"({"strategy": "random", "trials": 1000000000, "seconds": 604800})",
                                R"("trial_timeout_s": 604800,)"));
  const auto r = racelab("validate " + file);
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(HostileInput, AScheduleWithANumberBeyondADoubleIsBadInput) {
  ScratchDir dir;
  const std::string file = dir.write("huge.json", R"({"format": "racelab-schedule", "version": 1, "seed": 1e999999})");
  for (const char* cmd : {"replay", "minimize"}) {
    const auto r = racelab(std::string(cmd) + " " + file + " --in-process");
    EXPECT_EQ(r.code, 3) << cmd << ":\n" << r.output;  // it was an internal error, exit 70
    EXPECT_NE(r.output.find(file + ": not valid JSON"), std::string::npos) << cmd << ":\n" << r.output;
  }
}

TEST(HostileInput, AScheduleFolderThatCannotBeMadeFailsBeforeAnyTrial) {
  ScratchDir dir;
  const std::string blocker = dir.write("a-file", "not a folder");
  // direct_leak without a mitigation fails at once: before, its trials ran,
  // their records were written, and only its schedule then found the path bad.
  const auto r = racelab("run direct_leak -m none -s random -n 20 --in-process --schedule-dir " + blocker +
                         "/schedules --results " + dir.file("r.jsonl"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("--schedule-dir " + blocker + "/schedules: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("trial "), std::string::npos) << "a trial ran first:\n" << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r.jsonl"))) << r.output;
}

TEST(HostileInput, OutputsOfReplayAndMergeAreCheckedBeforeWork) {
  ScratchDir dir;
  const std::string blocker = dir.write("a-file", "not a folder");
  const auto [one, two] = two_shards(dir);
  for (const std::string& args : {"merge " + one + " " + two + " --out " + blocker + "/m",
                                  "merge " + one + " " + two + " --junit " + blocker + "/j.xml --out " + dir.file("m"),
                                  "replay " + dir.file("none.json") + " -o " + blocker + "/s.json"}) {
    const auto r = racelab(args);
    EXPECT_EQ(r.code, 3) << args << ":\n" << r.output;
    EXPECT_NE(r.output.find(blocker + " is a file, not a folder"), std::string::npos) << args << ":\n" << r.output;
  }
}

TEST(HostileInput, AScheduleOfAnotherWorkloadIsRefusedBeforeAnyTrial) {
  ScratchDir dir;
  // A failing schedule of direct_leak ...
  auto r = racelab("reproduce direct_leak -m none -s random -n 50 --in-process --no-minimize -o " +
                   dir.file("leak.json"));
  ASSERT_EQ(r.code, 1) << r.output;
  // ... replayed in a run of another workload: no trial, no divergence counted as a failure.
  r = racelab("run stuck_true -s replay:" + dir.file("leak.json") + " -n 3 --in-process");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(dir.file("leak.json") + ": a schedule of workload 'direct_leak', but this run is of "
                                                   "'stuck_true'"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("failure rate"), std::string::npos) << r.output;
  // Of its own workload it replays.
  r = racelab("run direct_leak -m none -s replay:" + dir.file("leak.json") + " -n 2 --in-process");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("failure rate     1.0000 (2/2)"), std::string::npos) << r.output;
}

}  // namespace
