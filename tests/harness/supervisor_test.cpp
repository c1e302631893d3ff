// Supervised trials: crash and hang cost one trial; the schedule survives.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/run_trial.h"
#include "engine/supervisor.h"
#include "test_workloads.h"

using racelab::Outcome;

namespace {
racelab::TrialSpec produce(const std::string& what, int64_t trial) {
  auto s = racelab_test::spec("t_outcome", {{"kind", "random"}}, 1, {{"produce", what}});
  s.trial = trial;
  s.watchdog_s = 0.5;
  return s;
}
}  // namespace

TEST(Supervisor, ManyTrialsPerWorker) {
  racelab::Supervisor sup;
  for (int i = 0; i < 30; ++i) EXPECT_EQ(sup.run(produce("holds", i), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 1);
}

TEST(Supervisor, SegfaultBecomesCrashWithScheduleAndFreshWorker) {
  racelab::Supervisor sup;
  EXPECT_EQ(sup.run(produce("holds", 0), 20).outcome, Outcome::kHolds);
  auto r = sup.run(produce("segv", 1), 20);
  EXPECT_EQ(r.outcome, Outcome::kCrash);
  EXPECT_NE(r.detail.find("SEGV"), std::string::npos) << r.detail;
  // The decisions up to the crash came back through shared memory.
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_EQ(r.decisions.back().point, "outcome.child");
  EXPECT_EQ(sup.run(produce("holds", 2), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, ATrialThatLeavesTheProcessUnfitGetsAFreshWorkerAfterIt) {
  racelab::Supervisor sup;
  EXPECT_EQ(sup.run(produce("holds", 0), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.run(produce("wrong_result", 1), 20).outcome, Outcome::kWrongResult);
  EXPECT_EQ(sup.workers_started(), 1) << "a plain failure keeps the worker";
  auto r = sup.run(produce("unfit", 2), 20);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << "its own outcome stands";
  EXPECT_TRUE(r.process_tainted);
  EXPECT_EQ(sup.run(produce("holds", 3), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, AbortBecomesCrash) {
  racelab::Supervisor sup;
  auto r = sup.run(produce("abort", 0), 20);
  EXPECT_EQ(r.outcome, Outcome::kCrash);
  EXPECT_NE(r.detail.find("ABRT"), std::string::npos) << r.detail;
}

TEST(Supervisor, BlockedInTheOsIsHangViaWatchdogThenFreshWorker) {
  racelab::Supervisor sup;
  auto r = sup.run(produce("os_hang", 0), 30);
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_NE(r.detail.find("watchdog"), std::string::npos) << r.detail;
  EXPECT_TRUE(r.process_tainted);
  EXPECT_EQ(sup.run(produce("holds", 1), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, UnresponsiveWorkerIsKilledAsHang) {
  racelab::Supervisor sup;
  auto s = produce("os_hang", 0);
  s.watchdog_s = 1000;  // the worker's own watchdog will not fire: the parent's timeout must
  auto r = sup.run(s, 0.5);
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_NE(r.detail.find("killed"), std::string::npos) << r.detail;
  EXPECT_EQ(sup.run(produce("holds", 1), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, DeadWorkerCommandIsAnError) {
  racelab::SupervisorOptions o;
  o.worker_argv = {"/nonexistent/racelab", "__worker"};
  racelab::Supervisor sup(o);
  EXPECT_THROW(sup.run(produce("holds", 0), 5), std::runtime_error);
}

// ---- killed from outside (issue: an OOM kill must not count as a race) ----

TEST(Supervisor, ARaisedSignalIsTheCodesOwnCrash) {
  racelab::Supervisor sup;
  auto r = sup.run(produce("raise_term", 0), 20);
  EXPECT_EQ(r.outcome, Outcome::kCrash) << r.detail;
  EXPECT_FALSE(r.metrics.contains("retries"));
}

TEST(Supervisor, ASignalFromAnotherProcessIsRetriedThenInfrastructure) {
  racelab::SupervisorOptions o;
  o.external_kill_retries = 1;
  o.pass_through_output = false;
  racelab::Supervisor sup(o);
  for (const char* how : {"killed_by_other_term", "killed_by_other_kill"}) {
    auto r = sup.run(produce(how, 0), 20);
    EXPECT_EQ(r.outcome, Outcome::kInfrastructure) << how << ": " << r.detail;
    EXPECT_FALSE(racelab::is_failure(r.outcome));
    EXPECT_EQ(r.metrics.value("retries", -1), 1) << r.metrics.dump();
    ASSERT_EQ(r.metrics["external_kills"].size(), 2u) << r.metrics.dump();
    const std::string first = r.metrics["external_kills"][0].get<std::string>();
    EXPECT_NE(first.find(how == std::string("killed_by_other_term") ? "SIGTERM) sent by process" : "SIGKILL"),
              std::string::npos)
        << first;
  }
}

TEST(Supervisor, AnOutsideSigkillIsRetriedWithTheSameSpec) {
  racelab::Supervisor sup;
  ASSERT_EQ(sup.run(produce("holds", 0), 20).outcome, Outcome::kHolds);
  const pid_t worker = sup.worker_pid();
  auto s = produce("sleep", 1);  // one second in the worker: time for the kill
  s.watchdog_s = 10;
  std::thread killer([worker] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(worker, SIGKILL);
  });
  auto r = sup.run(s, 20);
  killer.join();
  EXPECT_EQ(r.outcome, Outcome::kHolds) << r.detail;
  EXPECT_EQ(r.metrics.value("retries", 0), 1) << r.metrics.dump();
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(Supervisor, AStoppedWorkerIsNotAHang) {
  racelab::Supervisor sup;
  ASSERT_EQ(sup.run(produce("holds", 0), 20).outcome, Outcome::kHolds);
  const pid_t worker = sup.worker_pid();
  auto s = produce("sleep", 1);
  s.watchdog_s = 10;
  std::thread stopper([worker] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::kill(worker, SIGSTOP);
  });
  auto r = sup.run(s, 2.5);
  stopper.join();
  EXPECT_EQ(r.outcome, Outcome::kHolds) << r.detail;
  ASSERT_EQ(r.metrics.value("retries", 0), 1) << r.metrics.dump();
  EXPECT_NE(r.metrics["external_kills"][0].get<std::string>().find("stopped"), std::string::npos);
}

// A worker never outlives its supervisor, even one killed with SIGKILL in the
// middle of a trial that would otherwise block forever.
void expect_worker_dies_with_its_supervisor(const racelab::SupervisorOptions& options) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  if (parent == 0) {
    racelab::Supervisor sup(options);
    sup.run(produce("holds", 0), 20);
    const pid_t w = sup.worker_pid();
    if (::write(fds[1], &w, sizeof w) != sizeof w) ::_exit(1);
    auto s = produce("os_hang", 1);
    s.watchdog_s = 1000;
    sup.run(s, 1000);
    ::_exit(0);
  }
  pid_t worker = -1;
  ASSERT_EQ(::read(fds[0], &worker, sizeof worker), static_cast<ssize_t>(sizeof worker));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into the endless trial
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  auto alive = [worker] {
    std::FILE* f = std::fopen(("/proc/" + std::to_string(worker) + "/stat").c_str(), "r");
    if (f == nullptr) return false;
    char buf[512] = {};
    std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    const char* paren = std::strrchr(buf, ')');
    return paren == nullptr || paren[2] != 'Z';  // a zombie waiting for init is dead
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(alive()) << "worker " << worker << " outlived its supervisor";
  if (alive()) ::kill(worker, SIGKILL);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(Supervisor, AWorkerDiesWithItsSupervisor) { expect_worker_dies_with_its_supervisor({}); }

// Workers forked by the zygote (engine/zygote.h) are supervised as spawned
// ones are: they are this process's children once forked, so a crash is a
// crash with its schedule, a stuck worker is killed as a hang, and the next
// trial gets a fresh worker -- forked again.
racelab::SupervisorOptions forked() {
  racelab::SupervisorOptions o;
  o.fork_from_zygote = true;
  return o;
}

TEST(SupervisorZygote, AForkedWorkerIsThisProcesssChildAndRunsTrials) {
  racelab::Supervisor sup(forked());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sup.run(produce("holds", i), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.started_by(), "zygote fork");
  EXPECT_EQ(sup.workers_started(), 1);
  // waitpid() can see it only if it is our child (reparented from the zygote).
  EXPECT_EQ(::waitpid(sup.worker_pid(), nullptr, WNOHANG), 0);
}

TEST(SupervisorZygote, ASegfaultInAForkedWorkerIsACrashWithItsSchedule) {
  racelab::Supervisor sup(forked());
  auto r = sup.run(produce("segv", 0), 20);
  EXPECT_EQ(r.outcome, Outcome::kCrash);
  EXPECT_NE(r.detail.find("SEGV"), std::string::npos) << r.detail;
  ASSERT_FALSE(r.decisions.empty());
  EXPECT_EQ(r.decisions.back().point, "outcome.child");
  EXPECT_EQ(sup.run(produce("holds", 1), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
  EXPECT_EQ(sup.started_by(), "zygote fork");
}

TEST(SupervisorZygote, AnUnresponsiveForkedWorkerIsKilledAsHang) {
  racelab::Supervisor sup(forked());
  auto s = produce("os_hang", 0);
  s.watchdog_s = 1000;
  auto r = sup.run(s, 0.5);
  EXPECT_EQ(r.outcome, Outcome::kHang);
  EXPECT_NE(r.detail.find("killed"), std::string::npos) << r.detail;
  EXPECT_EQ(sup.run(produce("holds", 1), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.workers_started(), 2);
}

TEST(SupervisorZygote, ManyWorkersAtOnceFromOneZygote) {
  std::vector<std::unique_ptr<racelab::Supervisor>> sups;
  for (int i = 0; i < 4; ++i) sups.push_back(std::make_unique<racelab::Supervisor>(forked()));
  std::vector<std::thread> threads;
  std::vector<Outcome> outcomes(sups.size(), Outcome::kError);
  for (size_t i = 0; i < sups.size(); ++i)
    threads.emplace_back([&, i] { outcomes[i] = sups[i]->run(produce("holds", 0), 20).outcome; });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < sups.size(); ++i) {
    EXPECT_EQ(outcomes[i], Outcome::kHolds) << i;
    EXPECT_EQ(sups[i]->started_by(), "zygote fork") << i;
  }
}

TEST(SupervisorZygote, AnotherWorkerCommandIsSpawned) {
  racelab::SupervisorOptions o = forked();
  o.worker_argv = {"/proc/self/exe", "__worker"};
  racelab::Supervisor sup(o);
  EXPECT_EQ(sup.run(produce("holds", 0), 20).outcome, Outcome::kHolds);
  EXPECT_EQ(sup.started_by(), "spawn");
}

TEST(SupervisorZygote, AForkedWorkerDiesWithItsSupervisor) { expect_worker_dies_with_its_supervisor(forked()); }

// The worker's result line packs decisions and events (TrialResult::to_wire_json):
// what the parent reads from it is what it read from the object form.
namespace {
std::string through(const nlohmann::json& wire) {
  return racelab::TrialResult::from_json(nlohmann::json::parse(wire.dump())).to_json().dump();
}
}  // namespace

TEST(WorkerResultLine, PackedDecisionsAndEventsReadAsTheObjectForm) {
  int with_touched = 0, with_objects = 0, steps = 0, events = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const racelab::TrialResult r =
        racelab::run_trial(racelab_test::spec("t_deadlock", {{"kind", "random"}}, seed, {}, "none", 3));
    for (const auto& d : r.decisions) {
      with_touched += !d.touched.empty();
      with_objects += d.object >= 0;
    }
    steps += static_cast<int>(r.decisions.size());
    events += static_cast<int>(r.events.size());
    EXPECT_EQ(through(r.to_wire_json()), through(r.to_json())) << "seed " << seed;
  }
  // The trials had what the packed form must carry.
  EXPECT_GT(steps, 0);
  EXPECT_GT(events, 0);
  EXPECT_GT(with_touched, 0);
  EXPECT_GT(with_objects, 0);

  // Strings with spaces, quotes and digits; an object-less step whose write
  // flag the object form does not carry; a step let go.
  racelab::TrialResult r;
  r.outcome = Outcome::kHang;
  r.detail = "no \"progress\"";
  racelab::Decision a;
  a.step = 0, a.thread = 2, a.point = "a point 12 \"q\"", a.preemption = true, a.requester = 1;
  a.requester_runnable = true, a.runnable = {0, 1, 2}, a.object = -1, a.write = false, a.let_go = true;
  racelab::Decision b;
  b.step = 1, b.thread = 0, b.point = "", b.object = 7, b.write = false, b.touched = {7, -1};
  r.decisions = {a, b, a};
  r.events = {{0, 2, "acquire", "lock 3"}, {1, 0, "point", ""}, {2, 1, "acquire", "lock 3"}};
  EXPECT_EQ(through(r.to_wire_json()), through(r.to_json()));
  const racelab::TrialResult back = racelab::TrialResult::from_json(nlohmann::json::parse(r.to_wire_json().dump()));
  ASSERT_EQ(back.decisions.size(), 3u);
  EXPECT_EQ(back.decisions[0].point, a.point);
  EXPECT_TRUE(back.decisions[0].write);  // as the object form reads it
  EXPECT_EQ(back.decisions[1].touched, (std::vector<int>{7, -1}));
  EXPECT_FALSE(back.decisions[1].write);
  ASSERT_EQ(back.events.size(), 3u);
  EXPECT_EQ(back.events[0].what, "lock 3");
  EXPECT_EQ(back.events[1].what, "");

  // A torn or foreign line is refused, not read as fewer steps.
  nlohmann::json torn = r.to_wire_json();
  std::string packed = torn["decisions_packed"].get<std::string>();
  torn["decisions_packed"] = packed.substr(0, packed.size() - 2);
  EXPECT_THROW(racelab::TrialResult::from_json(torn), std::runtime_error);
  nlohmann::json bad_index = r.to_wire_json();
  bad_index["events_packed"] = "0 2 99 0";
  EXPECT_THROW(racelab::TrialResult::from_json(bad_index), std::runtime_error);
}
