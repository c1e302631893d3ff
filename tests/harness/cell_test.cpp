// run_cell: records, summary, schedules for failures, supervised by default.
#include <fstream>

#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/schedule.h"
#include "engine/supervisor.h"
#include "racelab/workload.h"
#include "test_workloads.h"

TEST(Cell, SupervisedCellStreamsRecordsAndSavesFailingSchedules) {
  racelab::CellSpec c;
  c.scenario = "flag";
  c.workload = "t_flag";
  c.strategy = "random";
  c.threads = 4;
  c.max_trials = 40;
  c.schedule_dir = ::testing::TempDir() + "/cell_schedules";
  std::vector<racelab::TrialRecord> recs;
  auto sum = racelab::run_cell(c, [&](const racelab::TrialRecord& r) { recs.push_back(r); });
  ASSERT_EQ(sum.trials, 40);
  ASSERT_EQ(recs.size(), 40u);
  int64_t failures = 0;
  for (const auto& r : recs) {
    EXPECT_EQ(racelab::TrialRecord::from_json(r.to_json()).to_json(), r.to_json());
    if (r.outcome != "holds") {
      ++failures;
      EXPECT_EQ(r.compact.rfind("racelab1:", 0), 0u);
    }
  }
  EXPECT_EQ(failures, sum.failures);
  ASSERT_GT(sum.failures, 0) << "random over 4 threads hits the lost restore";
  ASSERT_FALSE(sum.first_failure_schedule.empty());
  auto s = racelab::load_schedule(sum.first_failure_schedule);
  EXPECT_EQ(s.scenario, "flag");
  EXPECT_EQ(s.strategy, "random");
  EXPECT_NE(s.outcome, racelab::Outcome::kHolds);
}

TEST(Cell, MitigationHolds) {
  racelab::CellSpec c;
  c.workload = "t_flag";
  c.mitigation = "global_lock";
  c.strategy = "random";
  c.threads = 4;
  c.max_trials = 50;
  c.supervised = false;
  auto sum = racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  EXPECT_EQ(sum.failures, 0);
  EXPECT_EQ(sum.by_outcome["holds"], 50);
}

TEST(Cell, TheTimeCapStopsOnlyAfterTheMinimumTrials) {
  racelab::CellSpec c;
  c.workload = "t_flag";
  c.mitigation = "global_lock";
  c.strategy = "random";
  c.threads = 2;
  c.max_trials = 50;
  c.max_seconds = 1e-9;  // spent before the first trial ends
  c.supervised = false;
  EXPECT_LE(racelab::run_cell(c, [](const racelab::TrialRecord&) {}).trials, 1);
  c.min_trials = 7;
  EXPECT_EQ(racelab::run_cell(c, [](const racelab::TrialRecord&) {}).trials, 7);
}

TEST(Cell, BadInputIsRejectedBeforeAnyTrial) {
  racelab::CellSpec c;
  c.workload = "t_flag";
  c.strategy = "random";
  int calls = 0;
  auto sink = [&](const racelab::TrialRecord&) { ++calls; };
  c.knobs = {{"nope", 1}};
  EXPECT_THROW(racelab::run_cell(c, sink), std::invalid_argument);
  c.knobs = {{"atomic", "yes"}};
  EXPECT_THROW(racelab::run_cell(c, sink), std::invalid_argument);
  c.knobs = nlohmann::json::object();
  c.mitigation = "magic";
  EXPECT_THROW(racelab::run_cell(c, sink), std::invalid_argument);
  c.mitigation = "";
  c.workload = "no_such";
  EXPECT_THROW(racelab::run_cell(c, sink), std::invalid_argument);
  c.workload = "t_flag";
  c.strategy = "replay:/nonexistent.json";
  EXPECT_THROW(racelab::run_cell(c, sink), racelab::ScheduleError);
  EXPECT_EQ(calls, 0);
}

TEST(Cell, StopAtFirstFailureAndWorkerReuse) {
  racelab::CellSpec c;
  c.workload = "t_counter";
  c.strategy = "random";
  c.max_trials = 500;
  c.stop_at_first_failure = true;
  auto sum = racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  EXPECT_EQ(sum.failures, 1);
  EXPECT_EQ(sum.trials, sum.first_failure_trial + 1);
  int started = racelab::default_supervisor().workers_started();
  racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  EXPECT_EQ(racelab::default_supervisor().workers_started(), started) << "the worker is kept across cells";
}

TEST(Cell, ADecidedCellStillRunsItsRateTrials) {
  racelab::CellSpec c;
  c.workload = "t_counter";
  c.strategy = "random";
  c.max_trials = 500;
  c.stop_at_first_failure = true;
  const auto first = racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  ASSERT_EQ(first.failures, 1);
  // The same cell (same seeds), now asked for 7 trials past its first failure.
  c.rate_trials = first.trials + 7;
  const auto rated = racelab::run_cell(c, [](const racelab::TrialRecord&) {});
  EXPECT_EQ(rated.trials, first.trials + 7);
  EXPECT_EQ(rated.first_failure_trial, first.first_failure_trial);
  EXPECT_GE(rated.failures, 1);
}

TEST(Cell, FreeRunningWorkloadRejectsControlledStrategies) {
  racelab::register_workload({"t_free_only", "real concurrency only", {}, {"none"}, true, [] {},
                              [](const racelab::TrialInput&) { return racelab::Observation{}; }});
  racelab::CellSpec c;
  c.workload = "t_free_only";
  c.supervised = false;
  c.max_trials = 2;
  c.strategy = "pct:2";
  try {
    racelab::run_cell(c, [](const racelab::TrialRecord&) {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("os+jitter"), std::string::npos) << e.what();
  }
  c.strategy = "os";
  EXPECT_EQ(racelab::run_cell(c, [](const racelab::TrialRecord&) {}).trials, 2);
}
