// engine/strategy.h -- who runs next, decided at every scheduling step of ONE
// trial. These objects hold no state across trials: cross-trial learning is the
// parent's job (engine/driver.h), which sends each trial a JSON spec. Each
// kind is defined in its strategy's file (engine/strategies/family.h):
//
//   {"kind":"free"}                     os: no scheduler at all (strategies/os.cpp)
//   {"kind":"free","jitter":0.2}        os+jitter: free running, random yield/sleep at points
//   {"kind":"random"}                   uniform among the runnable threads (random.cpp)
//   {"kind":"pct","d":2,"k":120}        PCT: random priorities, d-1 change points in [0,k) (pct.cpp)
//   {"kind":"pos"}                      partial order sampling: random priorities per step,
//                                       redrawn for the steps that race with the one that ran (pos.cpp)
//   {"kind":"surw","interesting":["a.read",...],"counts":[[1,40],[2,3]]}
//                                       selectively uniform random walk: weights = estimated
//                                       interesting steps left per thread ("interesting"
//                                       absent: every step is) (surw.cpp)
//   {"kind":"follow","prefix":[0,1,1]}  DFS: follow a prefix, then never preempt (dfs.cpp)
//   {"kind":"replay","decisions":[{"thread":1,"point":"a"},...]}  follow exactly or diverge (replay.cpp)
//   {"kind":"preempt","set":[[A,k,B],...]}  when A makes its k-th request, switch to B;
//                                       otherwise never preempt (minimisation; preempt.cpp)
//
// Coin flips come from the trial seed, so a spec plus a seed is a schedule.
#ifndef RACELAB_ENGINE_STRATEGY_H_
#define RACELAB_ENGINE_STRATEGY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace racelab {

// What a thread's next step touches, from its point (racelab/point.h). The
// object is renumbered per trial in order of first appearance (0, 1, ...), so
// runs that follow the same prefix number it the same; -1: the point named no
// object, which makes the step dependent on every other.
struct Footprint {
  int object = -1;
  bool write = true;
};
// Two steps of different threads race (their order can matter) when either
// names no object, or both touch the same object and one of them writes.
bool dependent(const Footprint& a, const Footprint& b);

// The question the scheduler asks at one step.
struct ChoiceContext {
  int64_t step = 0;
  int requester = -1;               // the thread that reached the step
  bool requester_runnable = false;  // false: it blocked, joined or ended
  const std::vector<int>* runnable = nullptr;          // candidates, ascending, never empty
  const std::vector<const char*>* pending = nullptr;   // per thread id: the point it waits at
  const std::vector<Footprint>* footprints = nullptr;  // per thread id: what its next step touches
  // The requester did not ask: the watchdog let it go (Scheduler::let_go),
  // a step that depends on timing. A replay says determinism was lost here.
  bool let_go = false;
  // The requester stepped aside (sched_yield, a sleep, a timed wait): it is
  // not among the candidates, and strategies with priorities (PCT, POS, SURW)
  // lower its priority, so a polling loop cannot starve the thread it waits for.
  bool requester_yielded = false;
  // Per thread id: nonzero while its last request was a step aside, i.e. it
  // polls. Strategies rank a polling thread below one that does work.
  const std::vector<char>* polling = nullptr;
  // Per thread id: the step since which it has been a candidate without being
  // chosen (-1: it is not waiting).
  const std::vector<int64_t>* waiting_since = nullptr;
  // Fairness (0: none, as in racelab's own workloads): a candidate that has
  // waited this many steps runs next under every strategy that ranks threads
  // (PCT, POS, SURW, the non-preemptive default). The hosts for programs no
  // one here wrote turn it on: natively a thread gets a core within a time
  // slice, and a strategy that kept ranking it below a thread that loops doing
  // work -- a worker serving requests until the main thread tells it to stop
  // -- would never let the program end.
  int64_t fair_steps = 0;
};

// The candidate that has waited longest, if it has waited ctx.fair_steps or
// more; else -1.
int starved_thread(const ChoiceContext& ctx);

// Whether thread t polls (ChoiceContext::polling).
inline bool is_polling(const ChoiceContext& ctx, int t) {
  return ctx.polling != nullptr && static_cast<size_t>(t) < ctx.polling->size() && (*ctx.polling)[t] != 0;
}

// The non-preemptive default: keep the requester if it can run, else the
// lowest runnable id. Every strategy that "does nothing special" uses it, so
// schedules that differ only in preemptions stay comparable.
int default_choice(const ChoiceContext& ctx);

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Returns a member of *ctx.runnable, or -1 and sets *why: the run cannot
  // follow what the strategy demands (replay divergence).
  virtual int choose(const ChoiceContext& ctx, std::string* why) = 0;
};

// Builds the strategy for one trial; throws std::invalid_argument naming the
// field for a bad spec. `seed` is the trial seed. The kinds and their
// factories: engine/strategies/family.h.
std::unique_ptr<Strategy> make_strategy(const nlohmann::json& spec, uint64_t seed);

// splitmix64: the one mixing function for seeds (trial seeds, strategy streams).
uint64_t mix_seed(uint64_t a, uint64_t b);

}  // namespace racelab

#endif  // RACELAB_ENGINE_STRATEGY_H_
