// The exit-code contract (README.md, racelab/exit_code.h) on the inputs of
// issue 14: nonsense flag values are 2, missing inputs and unwritable outputs
// are 3 naming the path, compare and ci share one rule for a failed
// expectation, merge refuses a shard given twice, schedules are range-checked
// and strict about their keys, and errors name the file they come from. Then
// issue 38's: values that parsed into something else (a seed of -1 as 2^64-1,
// a NaN learning rate that trained for seconds and died with exit 70), and
// outputs found unwritable only after the work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "racelab_cli.h"

namespace {

using racelab::testing::racelab;
using racelab::testing::ScratchDir;

// A scenario of one cell, run in-process: direct_leak under global_lock,
// which holds, so `expectation` decides the verdict.
std::string scenario(const std::string& expectation, const std::string& threads = "[2]") {
  return R"({"format": "racelab-scenario", "version": 1, "name": "tiny", "description": "d",
    "workload": "direct_leak", "threads": )" +
         threads + R"(, "supervised": false,
    "strategies": [{"strategy": "random", "trials": 2}],
    "mitigations": ["global_lock"], "expectations": {"global_lock": )" +
         expectation + "}}";
}

// A valid schedule file of direct_leak: `threads` workers, `extra` keys.
std::string schedule(const std::string& threads = "2", const std::string& extra = "") {
  return R"({"format": "racelab-schedule", "version": 1, "workload": "direct_leak", "knobs": {},
    "mitigation": "none", "threads": )" +
         threads + R"(, "strategy": "random", "seed": 1, "decisions": [], )" + extra +
         R"("outcome": {"class": "error", "detail": "", "failing_step": 0}})";
}

TEST(ExitCodes, NonsenseFlagValuesAreUsageErrors) {
  for (const char* args : {"run direct_leak --in-process --timeout -1", "run direct_leak --in-process --max-seconds -4",
                           "run direct_leak --in-process -s pct:1000000", "run direct_leak --in-process -s dfs:100",
                           "run direct_leak --in-process -n abc", "run direct_leak --in-process -n 0",
                           "reproduce direct_leak --in-process --timeout 0", "replay x.json --timeout -1",
                           "replay x.json -n 0", "minimize x.json -n -3", "compare -j 0", "ci scenarios -j 0",
                           "ci scenarios --budget-scale -1", "version --bogus", "version extra"}) {
    const auto r = racelab(args);
    EXPECT_EQ(r.code, 2) << args << ":\n" << r.output;
    EXPECT_EQ(r.output.find("1797693"), std::string::npos) << args << ":\n" << r.output;
  }
  const auto r = racelab("run direct_leak -n abc");
  EXPECT_NE(r.output.find("expected an integer >= 1, got 'abc'"), std::string::npos) << r.output;
}

TEST(ExitCodes, AMissingInputFileIsBadInputEverywhere) {
  for (const char* cmd : {"chrome-trace", "minimize", "replay", "validate", "merge", "ci"}) {
    const auto r = racelab(std::string(cmd) + " /nonexistent/input.json");
    EXPECT_EQ(r.code, 3) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find("/nonexistent/input.json"), std::string::npos) << cmd << ":\n" << r.output;
  }
}

TEST(ExitCodes, AnUnwritableOutputIsBadInputNamingThePath) {
  ScratchDir dir;
  const std::string blocker = dir.write("a-file", "not a folder");  // nothing can be made below it, even by root
  auto r = racelab("run direct_leak -m global_lock -n 1 --in-process --results " + blocker + "/r.jsonl");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(blocker + "/r.jsonl"), std::string::npos) << r.output;
  const std::string file = dir.write("tiny.json", scenario(R"({"holds_over": 2})"));
  for (const char* cmd : {"compare", "ci"}) {
    r = racelab(std::string(cmd) + " " + file + " -j 1 --no-minimize --out " + blocker + "/report");
    EXPECT_EQ(r.code, 3) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find(blocker), std::string::npos) << cmd << ":\n" << r.output;
  }
}

TEST(ExitCodes, CompareAndCiExit1AlikeWhenAnExpectationFails) {
  ScratchDir dir;
  // global_lock holds, so "reproduces within 1" fails.
  const std::string failing = dir.write("tiny.json", scenario(R"({"reproduces_within": 1, "outcome": "error"})"));
  for (const char* cmd : {"compare", "ci"}) {
    const auto r = racelab(std::string(cmd) + " " + failing + " -j 1 --no-minimize --out " + dir.file(cmd));
    EXPECT_EQ(r.code, 1) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find("FAIL tiny/global_lock"), std::string::npos) << cmd << ":\n" << r.output;
  }
  const std::string holding = dir.write("tiny.json", scenario(R"({"holds_over": 2})"));
  for (const char* cmd : {"compare", "ci"}) {
    const auto r = racelab(std::string(cmd) + " " + holding + " -j 1 --no-minimize --out " + dir.file(cmd));
    EXPECT_EQ(r.code, 0) << cmd << ":\n" << r.output;
  }
}

TEST(ExitCodes, MergeRefusesAShardGivenTwice) {
  ScratchDir dir;
  const std::string file = dir.write("tiny.json", scenario(R"({"holds_over": 2})", "[2, 3]"));  // two cells
  for (const char* shard : {"1/2", "2/2"}) {
    const auto r = racelab("ci " + file + " --shard " + shard + " --out " + dir.file("s"));
    ASSERT_EQ(r.code, 0) << r.output;
  }
  const std::string one = dir.file("s/results-shard-1-of-2.jsonl"), two = dir.file("s/results-shard-2-of-2.jsonl");
  auto r = racelab("merge " + one + " " + two + " " + one + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(one + ": given twice"), std::string::npos) << r.output;
  // A copy of a shard under another name is the same shard.
  std::filesystem::copy_file(two, dir.file("copy.jsonl"));
  r = racelab("merge " + one + " " + two + " " + dir.file("copy.jsonl") + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("shard [2,2] of the same campaign as " + two), std::string::npos) << r.output;
  r = racelab("merge " + one + " " + two + " --out " + dir.file("m"));
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(ExitCodes, ScheduleThreadCountsAreRangeChecked) {
  ScratchDir dir;
  for (const char* threads : {"100000", "1099511627776", "65", "0"}) {
    const std::string file = dir.write("t.json", schedule(threads));
    const auto r = racelab("replay " + file + " --in-process");
    EXPECT_EQ(r.code, 3) << threads << ":\n" << r.output;
    EXPECT_NE(r.output.find(file + ": field 'threads': expected an integer from 1 to 64"), std::string::npos)
        << threads << ":\n" << r.output;
  }
}

TEST(ExitCodes, ScheduleFilesRejectUnknownKeys) {
  ScratchDir dir;
  std::string file = dir.write("t.json", schedule("2", R"("prdemption": 3, )"));
  auto r = racelab("replay " + file + " --in-process");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(file + ": field 'prdemption': unknown key"), std::string::npos) << r.output;
  file = dir.write("t.json", R"({"format": "racelab-schedule", "version": 1, "workload": "direct_leak", "knobs": {},
    "mitigation": "none", "threads": 2, "strategy": "random", "seed": 1,
    "decisions": [{"step": 0, "thread": 0, "point": "p", "prdemption": true}],
    "outcome": {"class": "error"}})");
  r = racelab("replay " + file + " --in-process");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("field 'decisions[0].prdemption': unknown key"), std::string::npos) << r.output;
}

TEST(ExitCodes, ErrorsAboutASchedulesContentsNameItsFile) {
  ScratchDir dir;
  const std::string good = schedule();
  struct Case {
    std::string from, to, says;
  } cases[] = {{"\"workload\": \"direct_leak\"", "\"workload\": \"no_such_workload\"", "unknown workload"},
               {"\"mitigation\": \"none\"", "\"mitigation\": \"no_such_fix\"", "mitigation 'no_such_fix'"},
               {"\"knobs\": {}", "\"knobs\": {\"flag_scope\": \"bogus\"}", "knob 'flag_scope'"}};
  for (const auto& c : cases) {
    std::string text = good;
    text.replace(text.find(c.from), c.from.size(), c.to);
    const std::string file = dir.write("bad.json", text);
    for (const char* cmd : {"replay", "minimize"}) {
      const auto r = racelab(std::string(cmd) + " " + file + " --in-process");
      EXPECT_EQ(r.code, 3) << cmd << " " << c.to << ":\n" << r.output;
      EXPECT_NE(r.output.find(file + ": "), std::string::npos) << cmd << " " << c.to << ":\n" << r.output;
      EXPECT_NE(r.output.find(c.says), std::string::npos) << cmd << " " << c.to << ":\n" << r.output;
      EXPECT_EQ(r.output.find("bad trial"), std::string::npos) << cmd << " " << c.to << ":\n" << r.output;
    }
  }
}

TEST(ExitCodes, ReproduceNamesOnlyFilesThatExist) {
  ScratchDir dir;
  const std::string out = dir.file("leak.schedule.json");
  const auto r = racelab("reproduce direct_leak -s random -n 50 --in-process --no-minimize -o " + out);
  ASSERT_EQ(r.code, 1) << r.output;  // direct_leak reproduces within a few random trials
  // Every path it prints must exist when it exits.
  for (size_t at = r.output.find(dir.path()); at != std::string::npos; at = r.output.find(dir.path(), at + 1)) {
    const size_t end = r.output.find_first_of(" \n)", at);
    const std::string path = r.output.substr(at, end - at);
    EXPECT_TRUE(std::filesystem::exists(path)) << path << " printed but deleted:\n" << r.output;
  }
  EXPECT_TRUE(std::filesystem::exists(out)) << r.output;
}

// ---- issue 38 -------------------------------------------------------------------

TEST(ExitCodes, SeedsOutsideUnsigned64AreUsageErrors) {
  // Both were taken as 2^64-1.
  for (const char* seed : {"-1", "99999999999999999999999", "18446744073709551616", "1e3", "0x10", "''"}) {
    // exec: the flag before the program (what follows `--` is the program's).
    for (const std::string cmd : {"run direct_leak --in-process -n 1 --seed ", "exec -n 1 --seed ",
                                  "train-target --quiet --seed ", "train --steps 1 --seed "}) {
      const auto r = racelab(cmd + seed + (cmd.rfind("exec", 0) == 0 ? " -- /bin/true" : ""));
      EXPECT_EQ(r.code, 2) << cmd << seed << ":\n" << r.output;
      EXPECT_NE(r.output.find("expected an integer from 0 to 18446744073709551615"), std::string::npos)
          << cmd << seed << ":\n" << r.output;
    }
  }
  // The largest seed is a seed.
  const auto r = racelab("run direct_leak -m global_lock -s random --in-process -n 1 -q --seed 18446744073709551615");
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(ExitCodes, AnEmptyStrategyIsAUsageError) {
  for (const char* cmd : {"run direct_leak --in-process -n 1 -s ''", "reproduce direct_leak --in-process -n 1 -s ''",
                          "exec -n 1 -s '' -- /bin/true"}) {
    const auto r = racelab(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ":\n" << r.output;
    EXPECT_NE(r.output.find("expected a strategy, got nothing"), std::string::npos) << cmd << ":\n" << r.output;
  }
}

TEST(ExitCodes, ExplainRefusesATorchVersionThatIsNoVersion) {
  // "banana" said "present", exit 0.
  const std::string message = "explain \"Detected that you are using FX to symbolically trace a dynamo-optimized "
                              "function\" --scenarios " RACELAB_SOURCE_DIR "/scenarios --torch ";
  for (const char* torch : {"banana", "2", "two.six"}) {
    const auto r = racelab(message + torch);
    EXPECT_EQ(r.code, 2) << torch << ":\n" << r.output;
    EXPECT_NE(r.output.find("expected a version as major.minor"), std::string::npos) << torch << ":\n" << r.output;
  }
  const auto r = racelab(message + "2.6");
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(ExitCodes, ANonFiniteLearningRateOrGammaIsAUsageErrorBeforeTraining) {
  ScratchDir dir;
  // --lr nan trained for seconds and died with a LibTorch stack (70); --gamma nan trained a nan loss, exit 0.
  for (const std::string flags : {"train --lr nan", "train --lr inf", "train --target-lr nan", "train --gamma nan",
                                  "train --gamma inf", "train-target --target-lr nan", "train-target --target-lr 0"}) {
    const auto r = racelab(flags + " --out " + dir.file("run"));
    EXPECT_EQ(r.code, 2) << flags << ":\n" << r.output;
    EXPECT_NE(r.output.find("expected a finite number > 0"), std::string::npos) << flags << ":\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("run"))) << flags << ": it trained:\n" << r.output;
  }
}

TEST(ExitCodes, OutputsThatCannotBeMadeAreCheckedBeforeTheWork) {
  ScratchDir dir;
  // /proc/x cannot be made, though access() tells root that /proc is writable:
  // train-target trained, then exited 70; ci ran the whole campaign, then exited 3.
  const std::string model = dir.file("target.ckpt");
  auto r = racelab("train-target --quiet --target-steps 2 --out " + model + " --export-torchscript /proc/x/t.pt");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("--export-torchscript /proc/x/t.pt: "), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(model)) << "it trained first:\n" << r.output;
  const std::string file = dir.write("tiny.json", scenario(R"({"holds_over": 2})"));
  for (const std::string flag : {"--junit /proc/x/j.xml", "--out /proc/x/report"}) {
    r = racelab("ci " + file + " -j 1 " + flag + (flag.rfind("--out", 0) == 0 ? "" : " --out " + dir.file("ci")));
    EXPECT_EQ(r.code, 3) << flag << ":\n" << r.output;
    EXPECT_NE(r.output.find(flag + ": cannot make anything in /proc"), std::string::npos) << flag << ":\n" << r.output;
    EXPECT_EQ(r.output.find("expectations:"), std::string::npos) << flag << ": the campaign ran:\n" << r.output;
  }
}

}  // namespace

