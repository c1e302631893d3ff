// Schedule files and the compact form: round trips and errors naming the field.
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "engine/run_trial.h"
#include "engine/schedule.h"
#include "test_workloads.h"

using racelab::Schedule;
using racelab::ScheduleError;

namespace {
Schedule sample() {
  auto s = racelab_test::spec("t_counter", {{"kind", "random"}}, 5, {{"increments", 3}});
  s.strategy_name = "random";
  s.scenario = "counter";
  return Schedule::from_trial(s, racelab::run_trial(s));
}
std::string error_of(const nlohmann::json& j) {
  try {
    Schedule::from_json(j, "x.json");
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Schedule, JsonRoundTripHasTheDocumentedShape) {
  Schedule s = sample();
  nlohmann::json j = s.to_json();
  for (const char* k : {"format", "version", "racelab_version", "scenario", "workload", "knobs", "mitigation",
                        "threads", "strategy", "seed", "decisions", "events", "outcome", "preemptions"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["format"], "racelab-schedule");
  EXPECT_FALSE(j.contains("minimized_from_preemptions"));
  EXPECT_TRUE(j["outcome"].contains("class"));
  EXPECT_TRUE(j["outcome"].contains("failing_step"));
  EXPECT_EQ(j["decisions"][0].size(), 4u);  // step, thread, point, preemption
  Schedule back = Schedule::from_json(j, "mem");
  EXPECT_EQ(back.to_json(), j);
}

TEST(Schedule, FileIsWrittenAtomicallyAndLoads) {
  Schedule s = sample();
  std::string path = ::testing::TempDir() + "/sched.json";
  racelab::save_schedule(s, path);
  std::ifstream tmp(path + ".tmp");
  EXPECT_FALSE(tmp.good()) << "the temporary file must be renamed away";
  EXPECT_EQ(racelab::load_schedule(path).to_json(), s.to_json());
}

TEST(Schedule, BadFilesNameTheField) {
  nlohmann::json good = sample().to_json();
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = good;
    j[key] = std::move(v);
    return j;
  };
  EXPECT_NE(error_of(with("format", "nope")).find("'format'"), std::string::npos);
  EXPECT_NE(error_of(with("version", 2)).find("'version'"), std::string::npos);
  EXPECT_NE(error_of(with("threads", "two")).find("'threads'"), std::string::npos);
  EXPECT_NE(error_of(with("seed", -1)).find("'seed'"), std::string::npos);
  EXPECT_NE(error_of(with("knobs", 3)).find("'knobs'"), std::string::npos);
  nlohmann::json j = good;
  j["decisions"][1]["thread"] = "one";
  EXPECT_NE(error_of(j).find("decisions[1].thread"), std::string::npos) << error_of(j);
  j = good;
  j["decisions"][2]["step"] = 7;
  EXPECT_NE(error_of(j).find("decisions[2].step"), std::string::npos) << error_of(j);
  j = good;
  j["outcome"]["class"] = "weird";
  EXPECT_NE(error_of(j).find("outcome.class"), std::string::npos);
  j = good;
  j.erase("workload");
  EXPECT_NE(error_of(j).find("'workload'"), std::string::npos);
  EXPECT_THROW(racelab::load_schedule("/nonexistent/s.json"), ScheduleError);
  std::string path = ::testing::TempDir() + "/broken.json";
  std::ofstream(path) << "{ not json";
  try {
    racelab::load_schedule(path);
    FAIL();
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
}

TEST(Schedule, CompactFormRoundTrips) {
  Schedule s = sample();
  std::string c = racelab::to_compact(s);
  EXPECT_EQ(c.rfind("racelab1:", 0), 0u);
  EXPECT_EQ(c.find_first_of(" \n\t"), std::string::npos) << "one log line";
  Schedule back = racelab::from_compact(c + "\n");
  EXPECT_EQ(back.workload, s.workload);
  EXPECT_EQ(back.mitigation, s.mitigation);
  EXPECT_EQ(back.threads, s.threads);
  EXPECT_EQ(back.seed, s.seed);
  EXPECT_EQ(back.knobs, s.knobs);
  EXPECT_EQ(back.scenario, s.scenario);
  EXPECT_EQ(back.outcome, s.outcome);
  ASSERT_EQ(back.decisions.size(), s.decisions.size());
  for (size_t i = 0; i < s.decisions.size(); ++i) EXPECT_EQ(back.decisions[i].thread, s.decisions[i].thread);
}

TEST(Schedule, CompactFormKeepsFull64BitSeeds) {
  Schedule s = sample();
  s.seed = 16490264502457544819ULL;  // above INT64_MAX, as mix_seed produces
  EXPECT_EQ(racelab::from_compact(racelab::to_compact(s)).seed, s.seed);
  EXPECT_EQ(Schedule::from_json(s.to_json(), "mem").seed, s.seed);
}

TEST(Schedule, BadCompactStringsAreRejected) {
  EXPECT_THROW(racelab::from_compact("racelab2:abc"), ScheduleError);
  EXPECT_THROW(racelab::from_compact("racelab1:!!!"), ScheduleError);
  std::string c = racelab::to_compact(sample());
  EXPECT_THROW(racelab::from_compact(c.substr(0, c.size() / 2)), ScheduleError);
  EXPECT_THROW(racelab::load_schedule_arg(c.substr(0, 20)), ScheduleError);
}
