// What the exec host needs of the scheduler beyond racelab::point: a step at
// which the caller steps aside (on_yield), letting a thread go after an
// uncontrolled wait (let_go) and rejoining, and replays that say where
// determinism was lost. Driven directly, without a workload: the tests play
// the preload shim's part.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "engine/schedule.h"
#include "engine/scheduler.h"
#include "engine/strategy.h"

using racelab::Decision;
using racelab::Scheduler;

namespace {

// Non-preemptive: keep the requester while it can run.
std::unique_ptr<racelab::Strategy> non_preemptive() {
  return racelab::make_strategy({{"kind", "follow"}, {"prefix", nlohmann::json::array()}}, 1);
}

}  // namespace

TEST(HostSteps, YieldHandsTheTurnToAnotherThreadWithoutAPreemption) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  std::vector<int> order;
  std::thread main_thread([&] {
    s.enter_main();
    const int id = s.on_thread_create();
    std::thread child([&, id] {
      s.on_thread_start(id);
      order.push_back(1);
      s.on_thread_end(id);
    });
    order.push_back(0);
    s.on_yield("sched_yield");  // the non-preemptive default would keep thread 0; a yield must not
    order.push_back(0);
    s.on_join(id);
    child.join();
    s.exit_main();
  });
  main_thread.join();
  ASSERT_EQ(order, (std::vector<int>{0, 1, 0}));
  auto ds = s.take_decisions();
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].thread, 1);
  EXPECT_EQ(ds[0].point, "thread.start");
  EXPECT_FALSE(ds[0].preemption) << "stepping aside is not a preemption";
  EXPECT_EQ(s.preemptions(), 0);
}

TEST(HostSteps, AThreadInAnUncontrolledWaitIsLetGoAndRejoins) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  std::atomic<bool> ready{false};
  std::thread main_thread([&] {
    s.enter_main();
    const int id = s.on_thread_create();
    std::thread child([&, id] {
      s.on_thread_start(id);
      ready = true;  // what thread 0 spins for, where the scheduler cannot see
      s.on_thread_end(id);
    });
    while (!ready) std::this_thread::yield();  // an uncontrolled wait: no step
    s.on_point("after.spin");                  // rejoins here
    s.on_join(id);
    child.join();
    s.exit_main();
  });
  // The watchdog's part: thread 0 is running and reaches no step.
  while (!s.let_go(0, "no scheduling point for 100 ms")) std::this_thread::yield();
  main_thread.join();
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  auto ds = s.take_decisions();
  ASSERT_FALSE(ds.empty());
  EXPECT_TRUE(ds[0].let_go);
  EXPECT_EQ(ds[0].requester, 0);
  EXPECT_EQ(ds[0].thread, 1);
  bool rejoined = false;
  for (const auto& e : s.take_events()) rejoined = rejoined || (e.kind == "rejoin" && e.thread == 0);
  EXPECT_TRUE(rejoined);
  // A thread that is not running, or with nobody else to run, is not let go.
  EXPECT_FALSE(s.let_go(0, "again"));
}

TEST(HostSteps, AReplaySaysWhereDeterminismWasLost) {
  std::vector<int> runnable{0, 1};
  std::vector<const char*> pending{"a", "b"};
  racelab::ChoiceContext ctx;
  ctx.runnable = &runnable;
  ctx.pending = &pending;
  ctx.requester = 0;
  ctx.requester_runnable = true;
  std::string why;
  // Recorded: thread 0 was let go at step 0; this run reached a point instead.
  auto replay = racelab::make_strategy(
      {{"kind", "replay"}, {"decisions", {{{"thread", 1}, {"point", "b"}, {"let_go", true}}}}}, 1);
  EXPECT_EQ(replay->choose(ctx, &why), -1);
  EXPECT_NE(why.find("determinism was lost"), std::string::npos) << why;
  // And the other way round: let go now, not in the recording.
  auto replay2 = racelab::make_strategy({{"kind", "replay"}, {"decisions", {{{"thread", 1}, {"point", "b"}}}}}, 1);
  ctx.let_go = true;
  why.clear();
  EXPECT_EQ(replay2->choose(ctx, &why), -1);
  EXPECT_NE(why.find("determinism was lost"), std::string::npos) << why;
}

TEST(HostSteps, ScheduleFilesKeepLetGo) {
  racelab::Schedule sched;
  sched.workload = "w";
  sched.mitigation = "none";
  Decision d;
  d.thread = 1;
  d.point = "p";
  d.let_go = true;
  sched.decisions = {d};
  auto back = racelab::Schedule::from_json(sched.to_json(), "test");
  ASSERT_EQ(back.decisions.size(), 1u);
  EXPECT_TRUE(back.decisions[0].let_go);
  EXPECT_TRUE(back.replay_spec().strategy["decisions"][0].value("let_go", false));
  // A decision without it reads as before.
  d.let_go = false;
  sched.decisions = {d};
  EXPECT_FALSE(racelab::Schedule::from_json(sched.to_json(), "test").decisions[0].let_go);
  EXPECT_FALSE(sched.to_json()["decisions"][0].contains("let_go"));
}

// Two threads poll (sched_yield) for a flag the main thread sets after some
// work. PCT runs the highest-priority thread; a poller that kept its priority
// when it stepped aside handed the turn to the other poller and back, and the
// main thread never ran: a livelock the program does not have. Pollers drop
// below every priority when they step aside, so every seed finishes.
TEST(HostSteps, PollersDoNotStarveTheThreadTheyWaitForUnderPct) {
  int livelocks = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto strategy = racelab::make_strategy({{"kind", "pct"}, {"d", 1}, {"k", 50}}, seed);
    Scheduler::Options opt;
    opt.max_steps = 5000;
    opt.poll_aware = true;  // the exec host's setting
    Scheduler s(strategy.get(), opt);
    std::atomic<bool> done{false};
    std::thread main_thread([&] {
      s.enter_main();
      const int a = s.on_thread_create(), b = s.on_thread_create();
      auto poller = [&](int id) {
        try {
          s.on_thread_start(id);
          while (!done) s.on_yield("sched_yield");
        } catch (const racelab::TrialAborted&) {
        }
        s.on_thread_end(id);
      };
      std::thread ta(poller, a), tb(poller, b);
      try {
        for (int i = 0; i < 10; ++i) s.on_point("work");
        done = true;
        s.on_join(a);
        s.on_join(b);
      } catch (const racelab::TrialAborted&) {
        done = true;
      }
      ta.join();
      tb.join();
      s.exit_main();
    });
    main_thread.join();
    if (s.aborted()) {
      ++livelocks;
      ADD_FAILURE() << "seed " << seed << ": " << s.abort_detail();
    }
  }
  EXPECT_EQ(livelocks, 0);
}

// The step limit is a livelock only when every runnable thread polls; a
// thread still doing work at the limit is a run longer than the limit.
TEST(HostSteps, TheStepLimitIsALivelockOnlyWhenEveryRunnableThreadPolls) {
  auto strategy = racelab::make_strategy({{"kind", "random"}}, 3);
  Scheduler::Options opt;
  opt.max_steps = 300;
  opt.poll_aware = true;  // the exec host's setting
  {
    Scheduler s(strategy.get(), opt);
    std::thread main_thread([&] {
      s.enter_main();
      const int a = s.on_thread_create(), b = s.on_thread_create();
      auto poller = [&](int id) {  // waits for a flag nobody sets
        try {
          s.on_thread_start(id);
          for (;;) s.on_yield(id == a ? "sched_yield" : "usleep");
        } catch (const racelab::TrialAborted&) {
        }
        s.on_thread_end(id);
      };
      std::thread ta(poller, a), tb(poller, b);
      try {
        s.on_join(a);
      } catch (const racelab::TrialAborted&) {
      }
      ta.join();
      tb.join();
      s.exit_main();
    });
    main_thread.join();
    ASSERT_TRUE(s.aborted());
    EXPECT_NE(s.abort_detail().find("livelock"), std::string::npos) << s.abort_detail();
    EXPECT_NE(s.abort_detail().find("every runnable thread only polls"), std::string::npos) << s.abort_detail();
  }
  {
    Scheduler s(strategy.get(), opt);
    std::thread main_thread([&] {
      s.enter_main();
      try {
        for (;;) s.on_point("work");  // a long run, not a poll
      } catch (const racelab::TrialAborted&) {
      }
      s.exit_main();
    });
    main_thread.join();
    ASSERT_TRUE(s.aborted());
    EXPECT_NE(s.abort_detail().rfind("livelock", 0), 0u) << s.abort_detail();
    EXPECT_NE(s.abort_detail().find("not a livelock"), std::string::npos) << s.abort_detail();
  }
}

// A sleep waits for logical time: while another thread can run it runs, and
// every step takes kStepNs; when nothing else can run, time jumps to the
// wake-up at once (no real time passes).
TEST(HostSteps, ASleepWaitsForLogicalTimeThatStepsAndIdlenessMoveOn) {
  auto strategy = non_preemptive();
  Scheduler s(strategy.get(), {});
  std::vector<int> order;
  int64_t woke_at = -1, alone_after = -1;
  std::thread main_thread([&] {
    s.enter_main();
    const int id = s.on_thread_create();
    std::thread child([&, id] {
      s.on_thread_start(id);
      for (int i = 0; i < 5; ++i) {
        order.push_back(1);
        s.on_point("work");
      }
      s.on_thread_end(id);
    });
    s.on_sleep("sleep", 3 * Scheduler::kStepNs);
    order.push_back(0);
    woke_at = s.now_ns();
    s.on_join(id);
    child.join();
    const int64_t before = s.now_ns();
    s.on_sleep("sleep", 1000000000);  // alone: a second passes at once
    alone_after = s.now_ns() - before;
    s.exit_main();
  });
  main_thread.join();
  EXPECT_FALSE(s.aborted()) << s.abort_detail();
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), 1) << "the sleeper ran before its time";
  EXPECT_GE(woke_at, 3 * Scheduler::kStepNs);
  EXPECT_GE(alone_after, 1000000000);
}

// With fairness on (the exec host), a thread that has waited fair_steps as a
// candidate runs next under the strategies that rank threads, even when a
// thread that does work would otherwise keep the turn; before that, and
// with fairness off (racelab's own workloads), the ranking stands.
TEST(HostSteps, AStarvedThreadRunsUnderEveryRankingStrategy) {
  std::vector<int> runnable{0, 1};
  std::vector<const char*> pending{"work", "sleep"};
  std::vector<racelab::Footprint> footprints(2);
  std::vector<char> polling{0, 1};
  std::vector<int64_t> waiting{-1, 0};
  racelab::ChoiceContext ctx;
  ctx.runnable = &runnable;
  ctx.pending = &pending;
  ctx.footprints = &footprints;
  ctx.polling = &polling;
  ctx.waiting_since = &waiting;
  ctx.requester = 0;
  ctx.requester_runnable = true;
  ctx.fair_steps = 1000;
  for (const char* kind : {"pct", "pos", "surw", "follow"}) {
    nlohmann::json spec = {{"kind", kind}};
    if (std::string(kind) == "pct") spec.update({{"d", 1}, {"k", 10}});
    if (std::string(kind) == "follow") spec["prefix"] = nlohmann::json::array();
    int chose_poller_early = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      auto strategy = racelab::make_strategy(spec, seed);
      std::string why;
      ctx.step = ctx.fair_steps - 1;  // not yet starved
      chose_poller_early += strategy->choose(ctx, &why) == 1;
      ctx.step = ctx.fair_steps;  // starved now
      EXPECT_EQ(strategy->choose(ctx, &why), 1) << kind << " seed " << seed;
    }
    if (std::string(kind) == "follow") {
      EXPECT_EQ(chose_poller_early, 0) << "the non-preemptive default keeps the worker";
    }
  }
  ctx.fair_steps = 0;  // off: the non-preemptive default keeps the worker however long the other waited
  ctx.step = 1000000;
  std::string why;
  EXPECT_EQ(racelab::make_strategy({{"kind", "follow"}, {"prefix", nlohmann::json::array()}}, 1)->choose(ctx, &why), 0);
}
