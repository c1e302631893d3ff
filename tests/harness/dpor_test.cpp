// dpor:P against dfs:P. dfs tries every schedule within the bound, so the set
// of outcomes it sees is the truth; dpor must see the same set from fewer
// schedules. Most cases run on a simulated program (straight-line threads of
// reads and writes, scheduled exactly as engine/scheduler.cpp decides), so
// hundreds of random programs take milliseconds; the rest run real workloads.
#include <map>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/driver.h"
#include "engine/strategy.h"
#include "racelab/point.h"
#include "racelab/sync.h"
#include "racelab/workload.h"
#include "test_workloads.h"

using nlohmann::json;

namespace {

// One step of a simulated thread: the point before it names `object` (or, if
// !named, nothing), and the step reads or writes it.
struct Op {
  int object = 0;
  bool write = false;
  bool named = true;
};
using Program = std::vector<std::vector<Op>>;  // per thread

// Runs `p` once the way the scheduler would: the running thread asks at every
// point and when it ends; the strategy picks among the threads with steps
// left. As in a workload, the threads start while the body that started them
// waits (here: thread n, which asks first and cannot run). The outcome is everything a schedule can change: each read's value and
// the final memory. `lie`: the points call every write a read.
racelab::TrialResult simulate(const Program& p, racelab::Strategy& s, std::string* outcome, bool lie = false) {
  const int n = static_cast<int>(p.size());
  std::vector<size_t> pc(n, 0);
  std::map<int, int> memory;
  std::vector<std::vector<int>> reads(n);
  std::vector<const char*> pending(n, "op");
  racelab::TrialResult r;
  int current = n;
  auto can_run = [&](int t) { return t < n && pc[t] < p[t].size(); };
  for (int64_t step = 0;; ++step) {
    std::vector<int> runnable;
    std::vector<racelab::Footprint> footprints(n);
    for (int t = 0; t < n; ++t) {
      if (pc[t] >= p[t].size()) continue;
      runnable.push_back(t);
      const Op& op = p[t][pc[t]];
      if (op.named) footprints[t] = racelab::Footprint{op.object, op.write && !lie};
    }
    if (runnable.empty()) break;
    racelab::ChoiceContext ctx;
    ctx.step = step;
    ctx.requester = current;
    ctx.requester_runnable = can_run(current);
    ctx.runnable = &runnable;
    ctx.pending = &pending;
    ctx.footprints = &footprints;
    std::string why;
    const int next = s.choose(ctx, &why);
    EXPECT_GE(next, 0) << why;
    if (next < 0) break;
    racelab::Decision d;
    d.step = step;
    d.thread = next;
    d.point = "op";
    d.preemption = ctx.requester_runnable && next != current;
    d.requester = current;
    d.requester_runnable = ctx.requester_runnable;
    d.runnable = runnable;
    d.object = footprints[next].object;
    d.write = footprints[next].write;
    r.preemptions += d.preemption ? 1 : 0;
    r.decisions.push_back(d);
    const Op& op = p[next][pc[next]++];
    if (op.write)
      memory[op.object] = next * 100 + static_cast<int>(pc[next]);
    else
      reads[next].push_back(memory[op.object]);
    current = next;
  }
  r.steps = static_cast<int64_t>(r.decisions.size());
  *outcome = json{{"memory", memory}, {"reads", reads}}.dump();
  return r;
}

struct Search {
  int64_t schedules = 0;
  std::set<std::string> outcomes;
  bool complete = false;
  int64_t max_preemptions = 0;
};

Search search(const Program& p, const std::string& strategy, bool lie = false) {
  auto driver = racelab::make_driver(strategy, static_cast<int>(p.size()));
  Search out;
  json spec;
  for (int64_t trial = 0; trial < 100000 && driver->next(trial, &spec); ++trial) {
    auto s = racelab::make_strategy(spec, 1);
    std::string outcome;
    racelab::TrialResult r = simulate(p, *s, &outcome, lie);
    out.outcomes.insert(outcome);
    out.max_preemptions = std::max(out.max_preemptions, r.preemptions);
    driver->observe(r);
    ++out.schedules;
  }
  out.complete = driver->exhausted();
  return out;
}

Program random_program(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> threads(2, 4), len(1, 4), object(0, 3), percent(0, 99);
  Program p(threads(rng));
  for (auto& t : p) {
    t.resize(len(rng));
    for (Op& op : t) op = Op{object(rng), percent(rng) < 50, percent(rng) >= 10};
  }
  return p;
}

// For failure messages: "t0: r0 W1 ?W2 | t1: ..." (?: the point names no object).
std::string show(const Program& p) {
  std::string out;
  for (size_t t = 0; t < p.size(); ++t) {
    out += (t ? " | t" : "t") + std::to_string(t) + ":";
    for (const Op& op : p[t]) out += std::string(" ") + (op.named ? "" : "?") + (op.write ? "W" : "r") + std::to_string(op.object);
  }
  return out;
}

}  // namespace

TEST(Dpor, SeesEveryOutcomeDfsSeesOnRandomProgramsFromFewerSchedules) {
  std::mt19937_64 rng(11);
  int64_t dfs_total = 0, dpor_total = 0;
  for (int program = 0; program < 500; ++program) {
    Program p = random_program(rng);
    if (p.size() == 4) p.back().resize(1);  // keeps dfs over four threads small
    for (int bound = 0; bound <= 2; ++bound) {
      const Search dfs = search(p, "dfs:" + std::to_string(bound));
      const Search dpor = search(p, "dpor:" + std::to_string(bound));
      ASSERT_TRUE(dfs.complete);
      ASSERT_TRUE(dpor.complete) << "program " << program << " bound " << bound;
      EXPECT_EQ(dpor.outcomes, dfs.outcomes) << show(p) << " bound " << bound;
      EXPECT_LE(dpor.schedules, dfs.schedules) << "program " << program << " bound " << bound;
      EXPECT_LE(dpor.max_preemptions, bound);
      dfs_total += dfs.schedules;
      dpor_total += dpor.schedules;
    }
  }
  std::printf("[measure] 500 random programs x bounds 0..2: dfs %lld schedules, dpor %lld\n",
              static_cast<long long>(dfs_total), static_cast<long long>(dpor_total));
  EXPECT_LT(dpor_total, dfs_total);
}

TEST(Dpor, IndependentThreadsNeedOneSchedule) {
  // Each thread writes its own object: every order is one class.
  const Program p{{{0, true}, {0, true}, {0, false}}, {{1, true}, {1, false}}, {{2, true}, {2, true}}};
  const Search dfs = search(p, "dfs:2");
  const Search dpor = search(p, "dpor:2");
  EXPECT_TRUE(dpor.complete);
  EXPECT_EQ(dpor.schedules, 1);
  EXPECT_GT(dfs.schedules, 20);
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
}

TEST(Dpor, TwoReadsOfOneObjectCommuteAReadAndAWriteDoNot) {
  const Program reads{{{0, false}, {0, false}}, {{0, false}, {0, false}}};
  EXPECT_EQ(search(reads, "dpor:2").schedules, 1) << "reads of one object are independent";
  const Program racing{{{0, false}, {0, true}}, {{0, false}, {0, true}}};  // lost update
  const Search dfs = search(racing, "dfs:2");
  const Search dpor = search(racing, "dpor:2");
  EXPECT_GT(dpor.schedules, 1);
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  EXPECT_GE(dfs.outcomes.size(), 3u);
}

TEST(Dpor, APointWithoutAnObjectIsDependentOnEverything) {
  // The second thread's step names no object; it really writes object 0.
  const Program p{{{0, false}, {0, true}}, {{0, true, /*named=*/false}}};
  const Search dfs = search(p, "dfs:1");
  const Search dpor = search(p, "dpor:1");
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  EXPECT_EQ(dpor.outcomes.size(), 3u);
}

TEST(Dpor, WrongIndependenceLosesOutcomes) {
  // The same programs with every write declared a read: the reduction then
  // takes racing writes for commuting reads and misses orders. This is what
  // the tests above would catch if dependence were computed wrongly.
  const Program racing{{{0, false}, {0, true}}, {{0, false}, {0, true}}};
  const Search truth = search(racing, "dfs:2", /*lie=*/true);
  const Search fooled = search(racing, "dpor:2", /*lie=*/true);
  EXPECT_LT(fooled.outcomes.size(), truth.outcomes.size());
}

TEST(Dpor, BoundedSearchNeedsTheCheapReversal) {
  // The race is between thread 0's last step and thread 1's only step; at the
  // race, reversing costs a preemption that bound 0 cannot pay, but running
  // thread 1 first costs none (thread 0 has not started). Plain DPOR with the
  // bound as a filter misses it (Coons et al.).
  const Program p{{{1, false}, {1, false}, {0, true}}, {{0, true}}};
  const Search dfs = search(p, "dfs:0");
  const Search dpor = search(p, "dpor:0");
  EXPECT_EQ(dfs.outcomes.size(), 2u);
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
}

// Two threads that each do `private` steps on their own slot, then an
// unlocked increment of a shared x: the private steps commute with everything
// the other thread does, which dfs cannot know.
// Knob declared: the threads say their first steps and the joins touch
// nothing shared (racelab::Touches), which is true here.
racelab::WorkloadRegistrar private_then_race{{
    "t_private_then_race", "private steps, then a lost update", {{"private", 4}, {"declared", false}}, {"none"}, false,
    [] {},
    [](const racelab::TrialInput& in) {
      const int64_t n = in.knobs.value("private", int64_t{4});
      const racelab::Touches touches =
          in.knobs.value("declared", false) ? racelab::Touches::kNothingShared : racelab::Touches::kAnything;
      int64_t x = 0;
      std::vector<int64_t> slots(2, 0);
      {
        std::vector<racelab::Thread> threads;
        for (int t = 0; t < 2; ++t)
          threads.emplace_back(touches, [&, t] {
            for (int64_t i = 0; i < n; ++i) {
              racelab::point("t.private", &slots[t], racelab::Access::kWrite);
              slots[t] += 1;
            }
            racelab::point("t.x.read", &x, racelab::Access::kRead);
            const int64_t v = x;
            racelab::point("t.x.write", &x, racelab::Access::kWrite);
            x = v + 1;
          });
        for (auto& t : threads) t.join(touches);
      }
      racelab::Observation o;
      if (x != 2) o.wrong_result = "lost update";
      return o;
    }}};

// A thread whose first step writes x before its first point (so it must not
// promise Touches::kNothingShared), next to one whose first step touches
// nothing: dpor must still see both final values of x.
racelab::WorkloadRegistrar first_step{{
    "t_first_step", "a first step that writes shared x", json::object(), {"none"}, false, [] {},
    [](const racelab::TrialInput&) {
      int x = 0;
      {
        racelab::Thread a(racelab::Touches::kNothingShared, [&] {  // true for a
          racelab::point("a.x.write", &x, racelab::Access::kWrite);
          x = 1;
        });
        racelab::Thread b([&] {
          x = 2;
          racelab::point("b.end", racelab::private_object(), racelab::Access::kWrite);
        });
        b.join(racelab::Touches::kNothingShared);  // true: x is read once both are joined
        a.join(racelab::Touches::kNothingShared);
      }
      racelab::Observation o;
      if (x == 2) o.wrong_result = "b wrote last";
      return o;
    }}};

// Real workloads through run_cell: the set of outcome classes (and, where the
// workload reports one, its result) must be dfs's.
static racelab::CellSummary real(const std::string& workload, const std::string& strategy, const json& knobs,
                          std::set<std::string>* outcomes) {
  racelab::CellSpec c;
  c.workload = workload;
  c.strategy = strategy;
  c.knobs = knobs;
  c.max_trials = 20000;
  c.supervised = false;
  return racelab::run_cell(c, [&](const racelab::TrialRecord& r) { outcomes->insert(r.outcome + " " + r.detail); });
}

TEST(Dpor, RealWorkloadsSameOutcomesAsDfs) {
  struct Case {
    const char* workload;
    json knobs;
    const char* bound;
    bool fewer;  // its points name objects, so there is something to reduce
  };
  const Case cases[] = {{"t_flag", json::object(), "2", false},
                        {"t_deadlock", json::object(), "1", false},
                        {"hard_long_prefix", {{"prefix", 6}}, "2", false},
                        {"hard_depth3", {{"padding", 3}}, "2", false},
                        {"t_private_then_race", {{"private", 4}}, "2", true},
                        {"t_private_then_race", {{"private", 4}, {"declared", true}}, "2", true},
                        {"t_first_step", json::object(), "1", false}};
  for (const Case& c : cases) {
    std::set<std::string> dfs_out, dpor_out;
    const auto dfs = real(c.workload, std::string("dfs:") + c.bound, c.knobs, &dfs_out);
    const auto dpor = real(c.workload, std::string("dpor:") + c.bound, c.knobs, &dpor_out);
    EXPECT_TRUE(dfs.exhausted) << c.workload;
    EXPECT_TRUE(dpor.exhausted) << c.workload;
    EXPECT_EQ(dpor_out, dfs_out) << c.workload;
    EXPECT_GT(dpor.failures, 0) << c.workload;
    EXPECT_LE(dpor.trials, dfs.trials) << c.workload;
    if (c.fewer) {
      EXPECT_LT(dpor.trials, dfs.trials) << c.workload;
    }
    EXPECT_GT(dpor.classes, 0);
    EXPECT_LE(dpor.classes, dpor.trials);
    std::printf("[measure] %s bound %s: dfs %lld schedules, dpor %lld schedules (%lld classes)\n", c.workload, c.bound,
                static_cast<long long>(dfs.trials), static_cast<long long>(dpor.trials),
                static_cast<long long>(dpor.classes));
  }
}

TEST(Dpor, ThreadsThatSayTheirFirstStepsAndJoinsTouchNothingSharedCommute) {
  std::set<std::string> undeclared_out, declared_out;
  const auto undeclared = real("t_private_then_race", "dpor:2", {{"private", 4}}, &undeclared_out);
  const auto declared = real("t_private_then_race", "dpor:2", {{"private", 4}, {"declared", true}}, &declared_out);
  EXPECT_TRUE(declared.exhausted);
  EXPECT_EQ(declared_out, undeclared_out);
  EXPECT_LT(declared.trials, undeclared.trials);
  std::printf("[measure] t_private_then_race dpor:2: %lld schedules, %lld with Touches::kNothingShared\n",
              static_cast<long long>(undeclared.trials), static_cast<long long>(declared.trials));
}
