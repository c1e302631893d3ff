// tests/cli/rank_processes_test.cpp -- the trainer's isolate_process keeps one
// worker process per rank (scenarios/register/trainer_workload.cpp): started
// and warmed before the first trial's clock, by the workload's prepare, and
// kept for the trials after it. Its metrics say so, so that a report never
// counts racelab's start-up as the isolation's cost without saying it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "racelab_cli.h"

namespace {

using nlohmann::json;
using racelab::testing::racelab;
using racelab::testing::ScratchDir;

std::vector<json> read_results(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

TEST(TrainerRankProcesses, AreStartedBeforeTheFirstTrialsClockAndKeptForTheNext) {
  ScratchDir dir;
  const auto r = racelab("run trainer -m isolate_process -t 2 -s os -n 3 -q --results " + dir.file("r.jsonl"));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto trials = read_results(dir.file("r.jsonl"));
  ASSERT_EQ(trials.size(), 3u) << r.output;
  for (size_t i = 0; i < trials.size(); ++i) {
    const json& m = trials[i].at("metrics");
    SCOPED_TRACE("trial " + std::to_string(i) + ": " + m.dump());
    EXPECT_EQ(m.at("mode"), "processes");
    EXPECT_GT(m.at("steps").get<int64_t>(), 0) << "every rank trained";
    if (i == 0) {
      // Both started (and warmed) by prepare, before the trial's clock: the
      // time that took is reported beside the trial's, not inside it.
      EXPECT_EQ(m.at("rank_processes_started"), 2);
      EXPECT_EQ(m.at("rank_processes_started_in_trial"), 0);
      EXPECT_EQ(m.at("rank_processes_reused"), 0);
      EXPECT_GT(m.at("rank_start_seconds").get<double>(), 0.0);
      EXPECT_FALSE(m.at("rank_processes_started_by").empty()) << "it says how they were started";
    } else {
      EXPECT_EQ(m.at("rank_processes_started"), 0);
      EXPECT_EQ(m.at("rank_processes_started_in_trial"), 0);
      EXPECT_EQ(m.at("rank_processes_reused"), 2);
    }
  }
}

}  // namespace
