// Hostile input on the surfaces of issue 30, each a reproducer that gave a
// false or late answer before: a schedule replayed in a run of another
// workload, merge of a torn or unfinished shard and of a directory, scenario
// files with a key twice or absurd budgets, and an output folder that cannot
// be made, found only after the trials had run. (Exec programs:
// tests/programs/hostile_input.sh.) Then issue 38's: scenarios that validate
// passed and compare then ran wrong (a seed twice, a name too long for a file,
// a strategy's thread count the sweep lacks), merge of shards that are not of
// one campaign, and schedules read loosely (a thread id narrowed to an int, a
// key twice, a folder for a file, chrome-trace's own reading).
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

// ---- issue 38: scenarios that validate and compare must both refuse --------

// validate and compare on the same file: both exit 3, both naming `path`.
void expect_refused_by_validate_and_compare(const ScratchDir& dir, const std::string& file, const std::string& path,
                                            const std::string& says) {
  const auto v = racelab("validate " + file);
  EXPECT_EQ(v.code, 3) << v.output;
  EXPECT_NE(v.output.find(file + ": " + path + ": found"), std::string::npos) << v.output;
  EXPECT_NE(v.output.find(says), std::string::npos) << v.output;
  const auto c = racelab("compare " + file + " -j 1 --no-minimize --no-progress --out " + dir.file("report"));
  EXPECT_EQ(c.code, 3) << c.output;
  EXPECT_NE(c.output.find(file + ": " + path + ": found"), std::string::npos) << c.output;
  EXPECT_EQ(c.output.find("expectations:"), std::string::npos) << "the campaign ran:\n" << c.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("report/results.jsonl"))) << "the campaign ran:\n" << c.output;
}

TEST(HostileInput, ASeedTwiceIsRefusedByValidateAndCompare) {
  ScratchDir dir;
  // [1, 1] ran each trial twice and counted it twice towards holds_over.
  const std::string file = dir.write("seeds.json", scenario_with(R"({"strategy": "random", "trials": 2})",
                                                                 R"("seeds": [1, 1],)"));
  expect_refused_by_validate_and_compare(dir, file, "$.seeds[1]", "each seed once");
  // Two seeds are fine.
  const std::string fine = dir.write("fine.json", scenario_with(R"({"strategy": "random", "trials": 2})",
                                                                R"("seeds": [1, 2],)"));
  EXPECT_EQ(racelab("validate " + fine).code, 0);
}

TEST(HostileInput, AScenarioNameTooLongForAFileIsRefusedByValidateAndCompare) {
  ScratchDir dir;
  std::string text = scenario_with(R"({"strategy": "random", "trials": 2})");
  text.replace(text.find("\"tiny\""), 6, "\"" + std::string(5000, 'a') + "\"");
  const std::string file = dir.write("long.json", text);
  expect_refused_by_validate_and_compare(dir, file, "$.name", "at most 64 characters");
  // 64 characters still names its files.
  text.replace(text.find(std::string(5000, 'a')), 5000, std::string(64, 'a'));
  const std::string fine = dir.write("fine.json", text);
  EXPECT_EQ(racelab("validate " + fine).code, 0);
}

TEST(HostileInput, AStrategyThreadCountTheSweepLacksIsRefusedByValidateAndCompare) {
  ScratchDir dir;
  // threads [4] beside a sweep of [2]: no cell, and "no error in 0 trials".
  const std::string file =
      dir.write("threads.json", scenario_with(R"({"strategy": "random", "trials": 2, "threads": [4]})"));
  expect_refused_by_validate_and_compare(dir, file, "$.strategies[0].threads[0]", "a thread count from $.threads");
  const std::string fine =
      dir.write("fine.json", scenario_with(R"({"strategy": "random", "trials": 2, "threads": [2]})"));
  EXPECT_EQ(racelab("validate " + fine).code, 0);
}

// ---- issue 38: merge of shards that are not one campaign ----------------------

TEST(HostileInput, MergeRefusesShardsOfTwoCatalogues) {
  ScratchDir dir;
  const auto [one, two] = two_shards(dir);
  // Shard 2/2 of another scenario: a second column labelled as the first.
  std::string other = two_cells();
  other.replace(other.find("\"tiny\""), 6, "\"other\"");
  const std::string file = dir.write("other.json", other);
  const auto c = racelab("ci " + file + " --shard 2/2 --out " + dir.file("o"));
  ASSERT_EQ(c.code, 0) << c.output;
  const std::string theirs = dir.file("o/results-shard-2-of-2.jsonl");
  const auto r = racelab("merge " + one + " " + theirs + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(theirs + ": not a shard of the same campaign as " + one), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m/report.json"))) << r.output;
}

TEST(HostileInput, MergeRefusesShardsCutIntoTwoShardCounts) {
  ScratchDir dir;
  const auto [one, two] = two_shards(dir);
  // Shard 1/3 beside 1/2: the cell both ran would be counted twice.
  const auto c = racelab("ci " + dir.file("tiny.json") + " --shard 1/3 --out " + dir.file("t"));
  ASSERT_EQ(c.code, 0) << c.output;
  const std::string third = dir.file("t/results-shard-1-of-3.jsonl");
  const auto r = racelab("merge " + one + " " + third + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(third + ": not a shard of the same campaign as " + one), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 shards of scenarios tiny"), std::string::npos) << r.output;
}

TEST(HostileInput, MergeRefusesAFileHoldingTwoShards) {
  ScratchDir dir;
  const auto [one, two] = two_shards(dir);
  const std::string first = slurp(one);
  const std::string both = dir.write("both.jsonl", first + slurp(two));
  const auto r = racelab("merge " + both + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(both + ":" + std::to_string(line_count(first) + 1) + ": a second campaign header"),
            std::string::npos)
      << r.output;
  // Each on its own merges.
  EXPECT_EQ(racelab("merge " + one + " " + two + " --out " + dir.file("m")).code, 0);
}

// ---- issue 38: schedules read as strictly as scenarios ------------------------

// A schedule file of direct_leak with one decision; `decision` its text.
std::string schedule_with(const std::string& decision, const std::string& extra = "") {
  return R"({"format": "racelab-schedule", "version": 1, "workload": "direct_leak", "knobs": {},
  "mitigation": "none", "threads": 2, "strategy": "random", "seed": 1, )" + extra + R"(
  "decisions": [)" + decision + R"(],
  "outcome": {"class": "error", "detail": "", "failing_step": 0}})";
}

TEST(HostileInput, AScheduleThreadIdBeyondAnIntIsRefusedNotWrapped) {
  ScratchDir dir;
  // 4294967297 = 2^32 + 1 replayed as thread 1, exit 0.
  for (const char* id : {"4294967297", "4294967296", "9223372036854775807", "1025"}) {
    const std::string file = dir.write("t.json", schedule_with(std::string(R"({"step": 0, "thread": )") + id + "}"));
    for (const char* cmd : {"replay", "chrome-trace"}) {
      const auto r = racelab(std::string(cmd) + " " + file + (std::string(cmd) == "replay" ? " --in-process" : ""));
      EXPECT_EQ(r.code, 3) << cmd << " " << id << ":\n" << r.output;
      EXPECT_NE(r.output.find(file + ": field 'decisions[0].thread': expected a thread id from 0 to 1024, got " + id),
                std::string::npos)
          << cmd << " " << id << ":\n" << r.output;
    }
  }
}

TEST(HostileInput, AScheduleWithAKeyTwiceIsRefusedNamingBothPlaces) {
  ScratchDir dir;
  const std::string file = dir.write("dup.json", schedule_with(R"({"step": 0, "thread": 0, "thread": 1})"));
  for (const char* cmd : {"replay", "minimize", "chrome-trace"}) {
    const auto r = racelab(std::string(cmd) + " " + file);
    EXPECT_EQ(r.code, 3) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find(file + ": field 'decisions[0].thread': the key \"thread\" twice: line 3, column 29 and "
                                   "line 3, column 42"),
              std::string::npos)
        << cmd << ":\n" << r.output;
  }
  // A top-level key twice too (the last would win, silently).
  const std::string seed = dir.write("seed.json", schedule_with("", R"("seed": 2,)"));
  const auto r = racelab("replay " + seed + " --in-process");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("the key \"seed\" twice"), std::string::npos) << r.output;
}

TEST(HostileInput, ReplayAndMinimizeOfAFolderAreBadInputNamingIt) {
  ScratchDir dir;
  for (const char* cmd : {"replay", "minimize"}) {
    const auto r = racelab(std::string(cmd) + " " + dir.path() + " --in-process");
    EXPECT_EQ(r.code, 3) << cmd << ":\n" << r.output;  // it was 70, "Is a directory"
    EXPECT_NE(r.output.find(dir.path() + ": is a directory, expected a schedule file"), std::string::npos)
        << cmd << ":\n" << r.output;
  }
}

TEST(HostileInput, ChromeTraceValidatesAScheduleAsReplayDoes) {
  ScratchDir dir;
  struct Case {
    std::string name, text, says;
  } cases[] = {
      // The wrong JSON type: a type_error, exit 70.
      {"thread-string", schedule_with(R"({"step": 0, "thread": "one"})"), "field 'decisions[0].thread'"},
      {"point-number", schedule_with(R"({"step": 0, "thread": 0, "point": 5})"), "field 'decisions[0].point'"},
      {"decisions-string", R"({"format": "racelab-schedule", "version": 1, "workload": "direct_leak", "knobs": {},
        "mitigation": "none", "threads": 2, "seed": 1, "decisions": "many", "outcome": {"class": "error"}})",
       "field 'decisions': expected an array"},
      // Drawn before, as if nothing were wrong.
      {"version-99", R"({"format": "racelab-schedule", "version": 99})", "field 'version': expected 1, got 99"},
      {"negative-step", schedule_with(R"({"step": -1, "thread": 0})"), "field 'decisions[0].step'"},
      {"negative-event-step",
       schedule_with("", R"("events": [{"step": -5, "thread": 0, "kind": "point", "what": "p"}],)"),
       "field 'events[0].step'"},
      // Called "expected racelab-schedule" before.
      {"empty", "", "not valid JSON"},
      {"binary", std::string("\x00\xff\xfe\x01racelab", 11), "not valid JSON"},
  };
  for (const auto& c : cases) {
    const std::string file = dir.write(c.name + ".json", c.text);
    const auto trace = racelab("chrome-trace " + file + " -o " + dir.file(c.name + ".trace.json"));
    EXPECT_EQ(trace.code, 3) << c.name << ":\n" << trace.output;
    EXPECT_NE(trace.output.find(file + ": "), std::string::npos) << c.name << ":\n" << trace.output;
    EXPECT_NE(trace.output.find(c.says), std::string::npos) << c.name << ":\n" << trace.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file(c.name + ".trace.json"))) << c.name;
    // replay says the same of it.
    const auto replay = racelab("replay " + file + " --in-process");
    EXPECT_EQ(replay.code, 3) << c.name << ":\n" << replay.output;
    EXPECT_NE(replay.output.find(c.says), std::string::npos) << c.name << ":\n" << replay.output;
  }
  // A sound schedule is drawn.
  const std::string good = dir.write("good.json", schedule_with(R"({"step": 0, "thread": 1, "point": "p"})"));
  const auto r = racelab("chrome-trace " + good + " -o " + dir.file("good.trace.json"));
  EXPECT_EQ(r.code, 0) << r.output;
  const auto trace = nlohmann::json::parse(slurp(dir.file("good.trace.json")));
  EXPECT_TRUE(trace["traceEvents"].is_array()) << trace.dump();
}

}  // namespace

