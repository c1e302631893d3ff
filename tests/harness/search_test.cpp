// The point model (objects and access), POS, SURW and the `auto` portfolio, on
// the hard-bug catalogue's own programs (scenarios/register/hard_bugs.cpp).
// Each claim is about fixed seeds, so every run is the same: the trial counts
// below were measured, and a strategy that ignored the objects (or a scheduler
// that lost them) would miss them.
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/driver.h"
#include "engine/minimize.h"
#include "engine/run_trial.h"
#include "engine/schedule.h"
#include "engine/strategy.h"
#include "test_workloads.h"

using racelab::Footprint;
using racelab::Outcome;
using racelab_test::spec;

namespace {
racelab::CellSpec search_cell(const std::string& workload, const std::string& strategy, uint64_t seed,
                              int64_t budget) {
  racelab::CellSpec c;
  c.workload = workload;
  c.strategy = strategy;
  c.max_trials = budget;
  c.seed = seed;
  c.supervised = false;
  c.stop_at_first_failure = true;
  return c;
}
// Trials to the first failure of one cell, or -1 within `budget`.
int64_t first_failure(const std::string& workload, const std::string& strategy, uint64_t seed, int64_t budget,
                      std::vector<racelab::TrialRecord>* records = nullptr) {
  auto sum = racelab::run_cell(search_cell(workload, strategy, seed, budget), [&](const racelab::TrialRecord& r) {
    if (records) records->push_back(r);
  });
  return sum.first_failure_trial < 0 ? -1 : sum.first_failure_trial + 1;
}
}  // namespace

TEST(PointModel, DependenceIsSameObjectWithAWriteOrNoObject) {
  EXPECT_TRUE(racelab::dependent(Footprint{-1, false}, Footprint{3, false}));
  EXPECT_TRUE(racelab::dependent(Footprint{3, false}, Footprint{-1, false}));
  EXPECT_TRUE(racelab::dependent(Footprint{3, true}, Footprint{3, false}));
  EXPECT_TRUE(racelab::dependent(Footprint{3, false}, Footprint{3, true}));
  EXPECT_FALSE(racelab::dependent(Footprint{3, false}, Footprint{3, false}));  // two reads commute
  EXPECT_FALSE(racelab::dependent(Footprint{3, true}, Footprint{4, true}));
}

TEST(PointModel, DecisionsCarryTheObjectAndAccessOfTheStep) {
  auto r = racelab::run_trial(spec("hard_long_prefix", {{"kind", "random"}}, 7, {{"prefix", 3}}));
  std::map<std::string, std::set<int>> objects;
  std::map<std::string, std::set<bool>> writes;
  for (const auto& d : r.decisions) {
    objects[d.point].insert(d.object);
    writes[d.point].insert(d.write);
  }
  ASSERT_EQ(objects["hard.x.read"].size(), 1u);
  EXPECT_EQ(objects["hard.x.read"], objects["hard.x.write"]) << "both increments touch the one x";
  EXPECT_GE(*objects["hard.x.read"].begin(), 0);
  EXPECT_EQ(writes["hard.x.read"], std::set<bool>{false});
  EXPECT_EQ(writes["hard.x.write"], std::set<bool>{true});
  EXPECT_EQ(objects["hard.private"].count(*objects["hard.x.read"].begin()), 0u);
  EXPECT_EQ(objects["thread.start"], std::set<int>{-1}) << "a step without an object says so";
}

TEST(PointModel, ControlledMutexNamesItselfAsAWrittenObject) {
  auto r = racelab::run_trial(spec("t_flag", {{"kind", "random"}}, 3));
  bool saw_lock = false;
  for (const auto& d : r.decisions)
    if (d.point == "compile_lock") {
      saw_lock = true;
      EXPECT_GE(d.object, 0);
      EXPECT_TRUE(d.write);
    }
  EXPECT_TRUE(saw_lock);
}

TEST(PointModel, SchedulesKeepObjectsAndRejectABadAccess) {
  auto r = racelab::run_trial(spec("hard_long_prefix", {{"kind", "random"}}, 7, {{"prefix", 3}}));
  racelab::TrialSpec ts = spec("hard_long_prefix", {{"kind", "random"}}, 7, {{"prefix", 3}});
  racelab::Schedule s = racelab::Schedule::from_trial(ts, r);
  racelab::Schedule back = racelab::Schedule::from_json(s.to_json(), "test");
  ASSERT_EQ(back.decisions.size(), r.decisions.size());
  for (size_t i = 0; i < back.decisions.size(); ++i) {
    EXPECT_EQ(back.decisions[i].object, r.decisions[i].object);
    EXPECT_EQ(back.decisions[i].write, r.decisions[i].write);
  }
  nlohmann::json j = s.to_json();
  for (auto& d : j["decisions"])
    if (d.contains("access")) {
      d["access"] = "scribble";
      break;
    }
  try {
    racelab::Schedule::from_json(j, "f.json");
    FAIL() << "a bad access must be rejected";
  } catch (const racelab::ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find(".access"), std::string::npos) << e.what();
  }
}

TEST(Search, NamesParseAndBadOnesAreRejected) {
  for (const char* ok : {"pos", "surw", "auto"}) EXPECT_NO_THROW(racelab::make_driver(ok, 2)) << ok;
  for (const char* bad : {"pos:1", "surw:2", "autox"}) EXPECT_THROW(racelab::make_driver(bad, 2), std::invalid_argument);
  EXPECT_TRUE(racelab::parse_strategy("auto").controlled());
}

// POS keeps the priority of a step that nothing raced with, so the second
// thread's first turn waits out the private padding far more often than a
// random walk lets it (measured: random needs about 1,000 trials or more).
TEST(Search, PosFindsTheDepth3BugWhereRandomDoesNot) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    int64_t pos = first_failure("hard_depth3", "pos", seed, 300);
    EXPECT_GT(pos, 0) << "seed " << seed;
    EXPECT_EQ(first_failure("hard_depth3", "random", seed, 300), -1) << "seed " << seed;
  }
}

TEST(Search, PosIsDeterministicPerSeed) {
  auto a = racelab::run_trial(spec("hard_order8", {{"kind", "pos"}}, 11, {}, "none", 8));
  auto b = racelab::run_trial(spec("hard_order8", {{"kind", "pos"}}, 11, {}, "none", 8));
  ASSERT_EQ(a.decisions.size(), b.decisions.size());
  for (size_t i = 0; i < a.decisions.size(); ++i) EXPECT_EQ(a.decisions[i].thread, b.decisions[i].thread);
}

// SURW runs the uninteresting prefix eagerly and then samples the four steps
// on x uniformly: the lost update is 4 of their 6 orders. Random never waits
// out 100 private steps; PCT needs its change point inside the increment.
TEST(Search, SurwFindsTheLongPrefixBugInAFewTrials) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    std::vector<racelab::TrialRecord> records;
    int64_t n = first_failure("hard_long_prefix", "surw", seed, 12, &records);
    EXPECT_GT(n, 1) << "seed " << seed << ": the first trial is the calibration run";
    ASSERT_FALSE(records.empty());
    EXPECT_NE(records[0].metrics.value("search", "").find("calibration"), std::string::npos);
    if (records.size() > 1) {
      EXPECT_NE(records[1].metrics.value("search", "").find("estimates from the 1 earlier trial"), std::string::npos)
          << records[1].metrics.dump();
    }
    EXPECT_EQ(first_failure("hard_long_prefix", "random", seed, 100), -1);
  }
}

TEST(Search, SurwSpecWeightsByRemainingSteps) {
  // Two threads, no objects: every step is interesting. Thread 2 is estimated
  // to have 1 step left, thread 1 many: the walk almost always picks thread 1.
  racelab::TrialSpec s = spec("t_counter", {{"kind", "surw"}, {"counts", {{1, 1000}, {2, 1}}}}, 5);
  auto r = racelab::run_trial(s);
  int first_choice_of_1 = 0, choices = 0;
  for (const auto& d : r.decisions)
    if (d.runnable.size() >= 2 && std::find(d.runnable.begin(), d.runnable.end(), 1) != d.runnable.end() &&
        std::find(d.runnable.begin(), d.runnable.end(), 2) != d.runnable.end()) {
      ++choices;
      first_choice_of_1 += d.thread == 1;
    }
  ASSERT_GT(choices, 0);
  EXPECT_EQ(first_choice_of_1, choices);
}

TEST(Search, FailuresOfPosAndSurwReplayAndMinimise) {
  for (const char* strategy : {"pos", "surw"}) {
    std::vector<racelab::TrialRecord> records;
    ASSERT_GT(first_failure("hard_depth3", strategy, 2, 300, &records), 0) << strategy;
    racelab::Schedule s = racelab::from_compact(records.back().compact);
    auto replay = racelab::run_trial(s.replay_spec());
    EXPECT_EQ(replay.outcome, Outcome::kWrongResult) << strategy << ": " << replay.detail;
    auto m = racelab::minimize(s, [](const racelab::TrialSpec& t) { return racelab::run_trial(t); });
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_EQ(m.schedule.outcome, Outcome::kWrongResult);
    EXPECT_LE(m.preemptions_after, m.preemptions_before);
    EXPECT_GE(m.preemptions_after, 2) << "A0 < B0 < A1 < B1 after a padded thread 1 needs two switches at least";
  }
}

// The portfolio finds every hard bug and says which of its arms did.
TEST(Search, AutoFindsEveryHardBugAndNamesTheArm) {
  for (const char* w : {"hard_long_prefix", "hard_depth3", "hard_order8"}) {
    std::vector<racelab::TrialRecord> records;
    auto c = search_cell(w, "auto", 1, 200);
    c.threads = std::string(w) == "hard_order8" ? 8 : 2;
    auto sum = racelab::run_cell(c, [&](const racelab::TrialRecord& r) { records.push_back(r); });
    ASSERT_GE(sum.first_failure_trial, 0) << w;
    std::set<std::string> arms;
    for (const auto& r : records) {
      ASSERT_TRUE(r.metrics.contains("strategy_used")) << w;
      arms.insert(r.metrics["strategy_used"].get<std::string>());
    }
    const std::string found_by = records.back().metrics["strategy_used"].get<std::string>();
    std::set<std::string> known(std::begin(racelab::kAutoArms), std::end(racelab::kAutoArms));
    EXPECT_EQ(known.count(found_by), 1u) << found_by;
    if (records.size() >= 4) {
      EXPECT_EQ(arms.size(), 3u) << w << ": the first four trials try every arm";
    }
  }
}

TEST(Search, AutoPrefersTheArmThatFails) {
  // After its first failures the portfolio gives most trials to the arm that found them.
  racelab::CellSpec c = search_cell("hard_long_prefix", "auto", 3, 120);
  c.stop_at_first_failure = false;
  std::map<std::string, int> trials;
  racelab::run_cell(c, [&](const racelab::TrialRecord& r) {
    if (r.trial >= 60) ++trials[r.metrics["strategy_used"].get<std::string>()];
  });
  EXPECT_GT(trials["surw"], 40) << "surw finds this bug in most trials; it should get most of the later ones";
}

namespace {
// A trial of two threads that each took `steps` steps at point "t.x" on one
// shared, written object (so SURW has an interesting set to draw).
racelab::TrialResult synthetic_trial(int64_t steps, Outcome outcome) {
  racelab::TrialResult r;
  r.outcome = outcome;
  r.managed_threads = 3;
  for (int64_t i = 0; i < 2 * steps; ++i) {
    racelab::Decision d;
    d.step = i;
    d.thread = 1 + static_cast<int>(i % 2);
    d.point = "t.x";
    d.object = 0;
    d.write = true;
    d.requester = d.thread;
    d.requester_runnable = true;
    d.runnable = {1, 2};
    r.decisions.push_back(d);
  }
  r.steps = 2 * steps;
  return r;
}
}  // namespace

// Until the first failure auto follows its fixed cycle (surw four turns in
// six), and every arm learns from every trial: surw's first turn already has
// estimates, pct:3's k is the longest trial any arm ran.
TEST(Search, AutoCyclesUntilTheFirstFailureAndEveryArmLearnsFromEveryTrial) {
  auto driver = racelab::make_driver("auto", 2, 5);
  std::vector<std::string> via;
  for (int64_t t = 0; t < 12; ++t) {
    nlohmann::json spec;
    ASSERT_TRUE(driver->next(t, &spec));
    const std::string arm = spec["via"].get<std::string>();
    via.push_back(arm);
    if (arm == "surw") {
      EXPECT_EQ(spec["kind"], "surw") << "trial " << t << ": no calibration run, pos's trial already taught it";
      EXPECT_EQ(spec["interesting"], nlohmann::json::array({"t.x"})) << t;
    }
    if (arm == "pct:3") {
      EXPECT_EQ(spec["k"], 2 * (10 + 3 * (t - 1))) << "k: the most steps of the trials before " << t;
    }
    driver->observe(synthetic_trial(10 + 3 * t, Outcome::kHolds));
  }
  std::vector<std::string> expected;
  for (int round = 0; round < 2; ++round)
    for (int arm : racelab::kAutoCycle) expected.push_back(racelab::kAutoArms[arm]);
  EXPECT_EQ(via, expected);
  EXPECT_EQ(std::count(via.begin(), via.end(), "surw"), 8);
  EXPECT_EQ(via.front(), "pos") << "the cycle starts with an arm that needs no estimates";
}

// After the first failure the arm that found it takes most trials (Thompson
// sampling on each arm's own failures), even one the cycle gives few turns.
TEST(Search, AutoFollowsTheArmThatFailedAfterTheCycle) {
  auto driver = racelab::make_driver("auto", 2, 9);
  std::map<std::string, int> later;
  for (int64_t t = 0; t < 200; ++t) {
    nlohmann::json spec;
    ASSERT_TRUE(driver->next(t, &spec));
    const std::string arm = spec["via"].get<std::string>();
    if (t >= 100) ++later[arm];
    driver->observe(synthetic_trial(10, arm == "pct:3" ? Outcome::kWrongResult : Outcome::kHolds));
  }
  EXPECT_GT(later["pct:3"], 90) << "pct:3 fails every trial it runs, the others never";
}
