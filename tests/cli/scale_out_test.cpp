// Beyond one machine: shards deal each cell's trials (engine/trial_plan.h),
// `--shard auto` reads the shard from the job scheduler, and `merge` adds a
// cell's parts up before judging it. The rule under all of it: a trial's
// outcome depends on its index alone, so the shards together are one
// machine's run, trial for trial.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "racelab_cli.h"

using nlohmann::json;
using racelab::testing::racelab_with_env;
using racelab::testing::ScratchDir;

namespace fs = std::filesystem;

namespace {

racelab::testing::CliResult rl(const std::string& args) { return racelab::testing::racelab(args); }

const std::string kOneCell = std::string(CLI_DATA) + "/scale_out/one_cell.json";

std::string compare(const std::string& out, const std::string& more = "") {
  return "compare " + kOneCell + " --out " + out + " -j 1 --no-progress --no-minimize " + more;
}

// trial index -> (seed, outcome, steps, arm) from results files.
using Trials = std::map<int64_t, std::tuple<uint64_t, std::string, int64_t, std::string>>;
void read_trials(const std::string& path, Trials* out) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line);
    if (!j.contains("trial")) continue;
    const json& t = j["trial"];
    const std::string arm = t.contains("metrics") ? t["metrics"].value("strategy_used", "") : "";
    EXPECT_TRUE(out->emplace(t.value("trial", int64_t{-1}),
                             std::make_tuple(t.value("seed", uint64_t{0}), t.value("outcome", ""),
                                             t.value("steps", int64_t{0}), arm))
                    .second)
        << "trial " << t.value("trial", -1) << " twice, in " << path;
  }
}

json cell_of(const std::string& report_json) {
  std::ifstream in(report_json);
  const json r = json::parse(in);
  EXPECT_EQ(r["scenarios"].size(), 1u);
  EXPECT_EQ(r["scenarios"][0]["cells"].size(), 1u);
  return r["scenarios"][0]["cells"][0];
}

}  // namespace

TEST(ScaleOut, AOneCellCampaignOverFourShardsMergesToTheUnshardedTrials) {
  ScratchDir d;
  const auto whole = rl(compare(d.file("whole")));
  ASSERT_EQ(whole.code, 0) << whole.output;
  Trials one_machine, sharded;
  read_trials(d.file("whole/results.jsonl"), &one_machine);
  ASSERT_EQ(one_machine.size(), 400u);
  std::string files;
  for (int k = 1; k <= 4; ++k) {
    const std::string out = d.file("shard" + std::to_string(k));
    const auto r = rl(compare(out, "--shard " + std::to_string(k) + "/4"));
    ASSERT_EQ(r.code, 0) << r.output;
    const std::string results = out + "/results-shard-" + std::to_string(k) + "-of-4.jsonl";
    Trials mine;
    read_trials(results, &mine);
    EXPECT_GE(mine.size(), 64u) << "shard " << k << " of 4 ran only " << mine.size() << " of the cell's 400 trials";
    for (const auto& t : mine) sharded.insert(t);
    files += " " + results;
  }
  EXPECT_EQ(sharded, one_machine) << "the shards' trials are not one machine's, trial for trial";
  const auto merged = rl("merge" + files + " --out " + d.file("merged"));
  ASSERT_EQ(merged.code, 0) << merged.output;
  EXPECT_EQ(merged.output.find("missing"), std::string::npos) << merged.output;
  const json a = cell_of(d.file("whole/report.json")), b = cell_of(d.file("merged/report.json"));
  EXPECT_EQ(b["trials"], a["trials"]);
  EXPECT_EQ(b["failures"], a["failures"]);
  EXPECT_EQ(b["first_failure_trial"], a["first_failure_trial"]);
  EXPECT_EQ(b["status"], "done");
  EXPECT_EQ(b["strategies_used"], a["strategies_used"]) << "auto's arms, trial by trial";
  EXPECT_EQ(b["note"], a["note"]) << "the portfolio's note over every part";
  EXPECT_GT(a["failures"].get<int64_t>(), 0);
}

TEST(ScaleOut, AMergeWithAShardMissingSaysSoAndDoesNotJudgeTheCell) {
  ScratchDir d;
  std::string files;
  for (int k : {1, 2, 4}) {  // shard 3 of 4 died
    const std::string out = d.file("shard" + std::to_string(k));
    ASSERT_EQ(rl(compare(out, "--shard " + std::to_string(k) + "/4")).code, 0);
    files += " " + out + "/results-shard-" + std::to_string(k) + "-of-4.jsonl";
  }
  const auto merged = rl("merge" + files + " --out " + d.file("merged") + " --ci");
  EXPECT_NE(merged.code, 0) << merged.output;
  EXPECT_NE(merged.output.find("a shard is missing"), std::string::npos) << merged.output;
}

TEST(ScaleOut, ShardAutoReadsSlurmKubernetesAndRacelabShard) {
  ScratchDir d;
  ASSERT_EQ(rl(compare(d.file("explicit"), "--shard 3/4")).code, 0);
  Trials expected;
  read_trials(d.file("explicit/results-shard-3-of-4.jsonl"), &expected);
  ASSERT_FALSE(expected.empty());
  const std::map<std::string, std::string> envs = {
      {"slurm",
       "-u RACELAB_SHARD SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=5 SLURM_ARRAY_TASK_MAX=8 SLURM_ARRAY_TASK_COUNT=4"},
      {"kubernetes", "-u RACELAB_SHARD -u SLURM_ARRAY_TASK_ID JOB_COMPLETION_INDEX=2 RACELAB_SHARD_COUNT=4"},
      {"plain", "RACELAB_SHARD=3/4"}};
  for (const auto& [name, env] : envs) {
    const std::string out = d.file(name);
    const auto r = racelab_with_env(env, compare(out, "--shard auto"));
    ASSERT_EQ(r.code, 0) << name << ": " << r.output;
    EXPECT_NE(r.output.find("shard 3 of 4"), std::string::npos) << r.output;
    Trials got;
    read_trials(out + "/results-shard-3-of-4.jsonl", &got);
    EXPECT_EQ(got, expected) << name << ": --shard auto is not --shard 3/4";
  }
}

TEST(ScaleOut, ShardAutoWithNothingToReadIsABadFlagNamingWhatItLookedFor) {
  ScratchDir d;
  const auto none = racelab_with_env("-u RACELAB_SHARD -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX",
                                     compare(d.file("none"), "--shard auto"));
  EXPECT_EQ(none.code, 2) << none.output;
  for (const char* v : {"RACELAB_SHARD", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"})
    EXPECT_NE(none.output.find(v), std::string::npos) << v << " not named: " << none.output;
  // A Slurm array with a step has gaps no i/n describes.
  const auto gaps = racelab_with_env(
      "-u RACELAB_SHARD SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_COUNT=4",
      compare(d.file("gaps"), "--shard auto"));
  EXPECT_EQ(gaps.code, 2) << gaps.output;
  EXPECT_NE(gaps.output.find("gaps"), std::string::npos) << gaps.output;
  const auto k8s = racelab_with_env("-u RACELAB_SHARD -u SLURM_ARRAY_TASK_ID -u RACELAB_SHARD_COUNT JOB_COMPLETION_INDEX=1",
                                    compare(d.file("k8s"), "--shard auto"));
  EXPECT_EQ(k8s.code, 2) << k8s.output;
  EXPECT_NE(k8s.output.find("RACELAB_SHARD_COUNT"), std::string::npos) << k8s.output;
  EXPECT_FALSE(fs::exists(d.file("none/results.jsonl")));
}

// -j N for one cell (cli/cell_parts.h): the same trials as -j 1, trial for
// trial, under a strategy that learns; the summary the same.
TEST(OneCell, JobsTwoRunsTheSameTrialsAsJobsOne) {
  ScratchDir d;
  std::map<int, Trials> by_jobs;
  std::map<int, std::string> summaries;
  for (int jobs : {1, 2, 3}) {
    const std::string results = d.file("j" + std::to_string(jobs) + ".jsonl");
    const auto r = rl("run direct_leak -s auto -n 200 --seed 9 --no-progress -j " + std::to_string(jobs) +
                      " --results " + results);
    ASSERT_EQ(r.code, 1) << r.output;  // the race is found
    std::ifstream in(results);
    for (std::string line; std::getline(in, line);) {
      const json t = json::parse(line);
      by_jobs[jobs][t["trial"].get<int64_t>()] = {t["seed"].get<uint64_t>(), t["outcome"].get<std::string>(),
                                                  t["steps"].get<int64_t>(),
                                                  t["metrics"].value("strategy_used", "")};
    }
    // Everything but the timing line.
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);)
      if (line.find("trials/s") == std::string::npos) summaries[jobs] += line + "\n";
  }
  ASSERT_EQ(by_jobs[1].size(), 200u);
  EXPECT_EQ(by_jobs[2], by_jobs[1]) << "-j 2 ran other trials than -j 1";
  EXPECT_EQ(by_jobs[3], by_jobs[1]) << "-j 3 ran other trials than -j 1";
  EXPECT_EQ(summaries[2], summaries[1]);
  EXPECT_EQ(summaries[3], summaries[1]);
}

TEST(OneCell, APartThatRefusesItsInputIsTheCommandsBadInput) {
  const auto r = rl("run direct_leak -n 100 -j 2 --no-progress -k no_such_knob=1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("no_such_knob"), std::string::npos) << r.output;
}

// On a terminal (script(1) gives it one) `run` shows a line that updates as
// trials end; with --no-progress, or with no terminal, none.
TEST(OneCell, ATerminalShowsAProgressLineThatUpdates) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "no script(1)";
  ScratchDir d;
  const std::string typescript = d.file("typescript");
  const std::string cmd = "script -qfec '" + std::string(RACELAB_EXE) + " run direct_leak -s random -n 3000' " +
                          typescript + " >/dev/null 2>&1";
  ASSERT_NE(std::system(cmd.c_str()), -1);
  std::ifstream in(typescript);
  const std::string screen((std::istreambuf_iterator<char>(in)), {});
  std::vector<long> done;
  for (size_t at = screen.find("\r\33[K["); at != std::string::npos; at = screen.find("\r\33[K[", at + 1))
    done.push_back(std::strtol(screen.c_str() + at + 5, nullptr, 10));
  ASSERT_GE(done.size(), 2u) << "no progress line that updates:\n" << screen.substr(0, 2000);
  EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
  EXPECT_GT(done.back(), done.front());
  EXPECT_NE(screen.find("trials/s"), std::string::npos);
  EXPECT_NE(screen.find("left"), std::string::npos);
  const auto quiet = rl("run direct_leak -s random -n 50");  // no terminal: popen
  EXPECT_EQ(quiet.output.find("\33[K"), std::string::npos) << quiet.output;
}
