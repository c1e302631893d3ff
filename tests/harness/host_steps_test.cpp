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
