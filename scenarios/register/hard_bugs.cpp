// scenarios/register/hard_bugs.cpp -- the hard-bug catalogue: small programs
// whose bug a random walk rarely finds, so that search strength shows
// (`racelab bench --sections search`, scenarios/hard_*.json).
//
// Every step names the object it touches (racelab/point.h), as an interposed
// or instrumented program would: steps on a thread's private slot are
// independent of everything else, the shared variables race. LibTorch-free.
//
//   hard_long_prefix  thread 1 does `prefix` private steps, then an unlocked
//                     increment of x (read, then write); thread 2 does the same
//                     increment at once. The lost update needs thread 2's read
//                     and write to fall inside thread 1's increment, i.e. thread
//                     2 must wait out the whole prefix: a depth-2 bug behind a
//                     long prefix of uninteresting steps.
//   hard_depth3       a turn counter c that thread 1 moves 0->1 and 2->3 and
//                     thread 2 moves 1->2 and 3->4, each step a guarded update;
//                     c reaches 4 only in the order A0 < B0 < A1 < B1 (three
//                     ordering constraints: depth 3), and thread 1 first does
//                     `padding` private steps.
//   hard_order8       seven setters each do `padding` private steps, then write
//                     a = 1 and b = -1; one checker reads a, then b. It fails when
//                     it sees a set but b not yet: it must run inside one
//                     setter's two writes, after that setter's padding -- an
//                     ordering among 8 threads (after SCTBench's reorder).
//
// Each reports the bug as wrong_result. The thread counts are part of the
// programs (the scenario's `threads` is 2, 2 and 8).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "racelab/point.h"
#include "racelab/sync.h"
#include "racelab/workload.h"

namespace {

using racelab::Access;
using racelab::Observation;
using racelab::TrialInput;

// Private work: `n` steps that each write the thread's own slot.
void private_steps(int64_t n, int64_t* slot) {
  for (int64_t i = 0; i < n; ++i) {
    racelab::point("hard.private", slot, Access::kWrite);
    *slot += 1;
  }
}

// ---- hard_long_prefix ------------------------------------------------------
Observation long_prefix(const TrialInput& in) {
  const int64_t prefix = in.knobs.value("prefix", int64_t{100});
  int64_t x = 0;
  std::vector<int64_t> slots(2, 0);
  auto increment = [&x] {
    racelab::point("hard.x.read", &x, Access::kRead);
    int64_t v = x;
    racelab::point("hard.x.write", &x, Access::kWrite);
    x = v + 1;
  };
  {
    racelab::Thread a([&] {
      private_steps(prefix, &slots[0]);
      increment();
    });
    racelab::Thread b([&] { increment(); });
  }
  Observation o;
  if (x != 2) o.wrong_result = "lost update: x = " + std::to_string(x) + " after two increments";
  return o;
}

// ---- hard_depth3 -----------------------------------------------------------
Observation depth3(const TrialInput& in) {
  const int64_t padding = in.knobs.value("padding", int64_t{10});
  int64_t c = 0;
  std::vector<int64_t> slots(2, 0);
  auto advance = [&c](int64_t from) {
    racelab::point("hard.turn", &c, Access::kWrite);  // one guarded update: a read-modify-write
    if (c == from) c = from + 1;
  };
  {
    racelab::Thread a([&] {
      private_steps(padding, &slots[0]);
      advance(0);
      advance(2);
    });
    racelab::Thread b([&] {
      advance(1);
      advance(3);
    });
  }
  Observation o;
  if (c == 4) o.wrong_result = "the turns ran A0 < B0 < A1 < B1: c reached 4";
  return o;
}

// ---- hard_order8 -----------------------------------------------------------
Observation order8(const TrialInput& in) {
  const int64_t padding = in.knobs.value("padding", int64_t{12});
  constexpr int kSetters = 7;
  int64_t a = 0, b = 0, seen_a = 0, seen_b = 0;
  std::vector<int64_t> slots(kSetters, 0);
  {
    std::vector<racelab::Thread> threads;
    for (int i = 0; i < kSetters; ++i)
      threads.emplace_back([&, i] {
        private_steps(padding, &slots[i]);
        racelab::point("hard.a.write", &a, Access::kWrite);
        a = 1;
        racelab::point("hard.b.write", &b, Access::kWrite);
        b = -1;
      });
    threads.emplace_back([&] {
      racelab::point("hard.a.read", &a, Access::kRead);
      seen_a = a;
      racelab::point("hard.b.read", &b, Access::kRead);
      seen_b = b;
    });
  }
  Observation o;
  if (seen_a == 1 && seen_b == 0) o.wrong_result = "the checker saw a = 1 but b = 0: it ran inside a setter";
  return o;
}

void check_positive(const nlohmann::json& knobs, const char* name) { racelab::int_knob(knobs, name, 0, 100000); }

racelab::WorkloadRegistrar long_prefix_registrar{racelab::Workload{
    "hard_long_prefix",
    "Hard bug: a lost update that needs thread 2 to wait out thread 1's long private prefix (depth 2)",
    nlohmann::json{{"prefix", 100}}, {"none"}, false, [] {}, &long_prefix,
    [](const nlohmann::json& k) { check_positive(k, "prefix"); }}};

racelab::WorkloadRegistrar depth3_registrar{racelab::Workload{
    "hard_depth3", "Hard bug: turns that must alternate A0 < B0 < A1 < B1 (depth 3) after thread 1's padding",
    nlohmann::json{{"padding", 10}}, {"none"}, false, [] {}, &depth3,
    [](const nlohmann::json& k) { check_positive(k, "padding"); }}};

racelab::WorkloadRegistrar order8_registrar{racelab::Workload{
    "hard_order8", "Hard bug: among 7 setters and 1 checker, the checker must run inside one setter's two writes",
    nlohmann::json{{"padding", 12}}, {"none"}, false, [] {}, &order8,
    [](const nlohmann::json& k) { check_positive(k, "padding"); }}};

}  // namespace
