// dpor:P -- exhaustive search with reduction: every class of
// equivalent schedules that has a member with at most P preemptions, each
// explored by one schedule or a few, instead of every schedule (dfs:P).
//
// Two schedules are equivalent (one Mazurkiewicz trace, one class) when one
// becomes the other by swapping adjacent steps of different threads that are
// independent: neither names no object, and they touch different objects or
// only read the same one (engine/strategy.h dependent()). A step also counts
// as writing what it released while it ran (Decision::touched), because
// releasing a mutex or notifying a condition variable decides whether a
// blocked thread can go on. Equivalent schedules end in the same state, so
// exploring one per class loses no outcome.
//
// The algorithm is stateless dynamic partial-order reduction with source
// sets (Flanagan & Godefroid, POPL 2005; Abdulla, Aronis, Jonsson, Sagonas,
// POPL 2014): after each trial, every race -- two dependent steps of different
// threads with nothing ordering them in between -- adds to the choice point
// before the first step a thread that can start the reversed order, unless one
// such thread is already there; when none of them could run there (blocked),
// every runnable thread is added. The preemption bound makes reordering cost
// preemptions, which plain DPOR does not know: a reversal that is too
// expensive where the race is may be cheap where the running thread's block of
// steps began. So each race also adds its thread there (bounded POR, Coons,
// Musuvathi, McKinley, OOPSLA 2013). Sleep sets are left out: they prune a
// schedule because an equivalent one was explored, and under a preemption
// bound that one may have been over the bound and never run.
//
// Trials are ordinary follow-a-prefix trials (strategies/dfs.cpp), so every
// schedule is recorded, replayable and minimisable as with dfs. The driver
// counts the classes it explored (classes()); exhausted() says the search
// finished and no run disagreed with its prefix.
#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "engine/strategies/family.h"

namespace racelab {

using nlohmann::json;

namespace {

// One step of a trial as the reduction sees it: its thread, and everything it
// touches (its point's object, then what it released or joined).
struct Step {
  int thread = 0;
  std::vector<Footprint> touches;
};

Step step_of(const Decision& d) {
  Step s;
  s.thread = d.thread;
  s.touches.push_back(Footprint{d.object, d.write});
  for (int o : d.touched) s.touches.push_back(Footprint{o, true});
  return s;
}

bool steps_dependent(const Step& a, const Step& b) {
  for (const Footprint& x : a.touches)
    for (const Footprint& y : b.touches)
      if (dependent(x, y)) return true;
  return false;
}

// The happens-before order of one trial: step i happens before step j when a
// chain of program order and dependent pairs leads from i to j. Kept as vector
// clocks: clock(j, t) is how many of thread t's steps happen before j or are j.
class HappensBefore {
 public:
  explicit HappensBefore(std::vector<Step> steps) : steps_(std::move(steps)) {
    for (const Step& s : steps_) threads_ = std::max(threads_, s.thread + 1);
    const size_t n = steps_.size();
    clock_.assign(n * threads_, 0);
    pos_.assign(n, 0);
    last_.assign(n * threads_, -1);
    std::vector<int> count(threads_, 0), prev(threads_, -1);
    for (size_t j = 0; j < n; ++j) {
      const int t = steps_[j].thread;
      pos_[j] = ++count[t];
      // The latest step of each thread that is a direct predecessor of j: its
      // program-order predecessor, and per other thread the latest dependent
      // step (earlier ones of that thread happen before it anyway).
      int* last = &last_[j * threads_];
      last[t] = prev[t];
      int missing = threads_ - 1;
      for (size_t i = j; i-- > 0 && missing > 0;) {
        const int u = steps_[i].thread;
        if (u == t || last[u] >= 0) continue;
        if (steps_dependent(steps_[i], steps_[j])) {
          last[u] = static_cast<int>(i);
          --missing;
        }
      }
      int* c = &clock_[j * threads_];
      for (int u = 0; u < threads_; ++u)
        if (last[u] >= 0)
          for (int x = 0; x < threads_; ++x) c[x] = std::max(c[x], clock(last[u], x));
      c[t] = pos_[j];
      prev[t] = static_cast<int>(j);
    }
  }

  size_t size() const { return steps_.size(); }
  int threads() const { return threads_; }
  int thread(size_t i) const { return steps_[i].thread; }
  int pos(size_t i) const { return pos_[i]; }
  int clock(size_t j, int t) const { return clock_[j * threads_ + t]; }
  bool before(size_t i, size_t j) const { return clock(j, thread(i)) >= pos(i); }

  // The races that end at step j: each step i of another thread that j depends
  // on directly, with no other step ordering them (i -> k -> j).
  std::vector<int> races_into(size_t j) const {
    std::vector<int> out;
    const int* last = &last_[j * threads_];
    for (int u = 0; u < threads_; ++u) {
      const int i = last[u];
      if (u == thread(j) || i < 0) continue;
      bool ordered = false;
      for (int w = 0; w < threads_ && !ordered; ++w)
        if (w != u && last[w] >= 0 && clock(last[w], u) >= pos(i)) ordered = true;
      if (!ordered) out.push_back(i);
    }
    return out;
  }

  // The threads that can start, at the choice point before step i, a schedule
  // in which j comes before i: of the steps after i that do not happen after
  // it, then j, those whose thread's first step there has no predecessor there
  // (source sets, Abdulla et al.).
  std::vector<int> initials(size_t i, size_t j) const {
    std::vector<int> first(threads_, -1), out;
    auto consider = [&](size_t k) {
      const int w = thread(k);
      if (first[w] >= 0) return;
      bool free = true;
      for (int x = 0; x < threads_ && free; ++x)
        if (x != w && first[x] >= 0 && clock(k, x) >= pos(first[x])) free = false;
      first[w] = static_cast<int>(k);
      if (free) out.push_back(w);
    };
    for (size_t k = i + 1; k < j; ++k)
      if (!before(i, k)) consider(k);
    consider(j);
    return out;
  }

  // A canonical name for the trial's class: its lexicographically least
  // linearisation (by thread id). Equivalent schedules share it.
  std::string normal_form() const {
    std::vector<std::vector<int>> of(threads_);
    for (size_t i = 0; i < steps_.size(); ++i) of[steps_[i].thread].push_back(static_cast<int>(i));
    std::vector<size_t> next(threads_, 0);
    std::vector<int> done(threads_, 0);
    std::string out;
    for (size_t n = 0; n < steps_.size(); ++n) {
      for (int t = 0; t < threads_; ++t) {
        if (next[t] >= of[t].size()) continue;
        const int k = of[t][next[t]];
        bool ready = true;
        for (int x = 0; x < threads_ && ready; ++x)
          if (x != t && clock(k, x) > done[x]) ready = false;
        if (!ready) continue;
        out.push_back(static_cast<char>(t));
        ++next[t];
        ++done[t];
        break;
      }
    }
    return out;
  }

 private:
  std::vector<Step> steps_;
  int threads_ = 1;
  std::vector<int> clock_, pos_, last_;
};

class DporDriver : public StrategyDriver {
 public:
  explicit DporDriver(int bound) : bound_(bound) {}

  bool next(int64_t, json* spec) override {
    if (done_) return false;
    std::vector<int> prefix;
    for (const Node& n : stack_) prefix.push_back(n.chosen);
    *spec = {{"kind", "follow"}, {"prefix", prefix}};
    return true;
  }

  void observe(const TrialResult& r) override {
    ++schedules_;
    // Steps before `branch` are the ones the last trial already analysed.
    size_t branch = stack_.empty() ? 0 : stack_.size() - 1;
    int64_t pre = 0;
    size_t i = 0;
    for (; i < r.decisions.size(); ++i) {
      const Decision& d = r.decisions[i];
      if (i < stack_.size()) {
        Node& n = stack_[i];
        if (n.runnable != d.runnable || n.requester != d.requester || n.requester_runnable != d.requester_runnable ||
            n.chosen != d.thread) {
          // The same prefix led somewhere else: something the scheduler does
          // not control decided. Keep exploring, but the verdict is weakened.
          nondeterministic_ = true;
          n = fresh(d, pre);
          branch = std::min(branch, i);
        }
      } else {
        stack_.push_back(fresh(d, pre));
      }
      if (d.preemption) ++pre;
    }
    if (i < stack_.size()) {
      stack_.resize(i);  // the run ended early (divergence, crash, hang)
      if (r.outcome == Outcome::kDivergence) nondeterministic_ = true;
    }
    std::vector<Step> steps;
    for (size_t k = 0; k < i; ++k) steps.push_back(step_of(r.decisions[k]));
    const HappensBefore hb(std::move(steps));
    for (size_t j = branch; j < hb.size(); ++j)
      for (int race : hb.races_into(j)) reverse(hb, static_cast<size_t>(race), j);
    classes_.insert(std::hash<std::string>{}(hb.normal_form()));
    while (!stack_.empty()) {
      Node& n = stack_.back();
      auto it = std::find_if(n.backtrack.begin(), n.backtrack.end(), [&](int q) { return n.done.count(q) == 0; });
      if (it != n.backtrack.end()) {
        n.chosen = *it;
        n.done.insert(*it);
        break;
      }
      stack_.pop_back();
    }
    done_ = stack_.empty();
  }

  bool exhausted() const override { return done_ && !nondeterministic_; }
  int64_t classes() const override { return static_cast<int64_t>(classes_.size()); }
  std::string note() const override {
    if (nondeterministic_) return "dpor saw uncontrolled nondeterminism: the search may be incomplete";
    return fmt::format("dpor {}: {} classes in {} schedules", done_ ? "complete" : "incomplete (budget ran out)",
                       classes_.size(), schedules_);
  }

 private:
  // A choice point: the state before one step of the current schedule.
  struct Node {
    std::vector<int> runnable;
    int requester = -1;
    bool requester_runnable = false;
    int chosen = -1;
    int64_t preemptions = 0;  // before this step
    std::set<int> backtrack;  // threads to try here
    std::set<int> done;       // tried (or being tried)
  };

  static Node fresh(const Decision& d, int64_t preemptions) {
    Node n;
    n.runnable = d.runnable;
    n.requester = d.requester;
    n.requester_runnable = d.requester_runnable;
    n.chosen = d.thread;
    n.preemptions = preemptions;
    n.backtrack = {d.thread};
    n.done = {d.thread};
    return n;
  }

  bool affordable(const Node& n, int q) const {
    const bool preempts = n.requester_runnable && q != n.requester;
    return n.preemptions + (preempts ? 1 : 0) <= bound_;
  }

  // Race (i, j): make sure some thread that can run j's side first is tried
  // before step i, and (bounded POR) where i's thread began its block of steps.
  void reverse(const HappensBefore& hb, size_t i, size_t j) {
    const int q = hb.thread(j);
    const Node& at = stack_[i];
    const bool was_blocked = std::find(at.runnable.begin(), at.runnable.end(), q) == at.runnable.end();
    const bool enabled_by_i = i + 1 < stack_.size() && was_blocked &&
                              std::find(stack_[i + 1].runnable.begin(), stack_[i + 1].runnable.end(), q) !=
                                  stack_[i + 1].runnable.end();
    if (enabled_by_i) return;  // step i let j's thread run at all: no order to reverse
    add(i, q);
    size_t start = i;
    while (start > 0 && hb.thread(start - 1) == hb.thread(i)) --start;
    if (start < i) add(start, q);
  }

  // Try q at choice point `at`, or, where q cannot run, every thread that
  // can (Flanagan and Godefroid); only what the bound allows.
  void add(size_t at, int q) {
    Node& n = stack_[at];
    if (std::find(n.runnable.begin(), n.runnable.end(), q) == n.runnable.end()) {
      for (int t : n.runnable)
        if (affordable(n, t)) n.backtrack.insert(t);
    } else if (affordable(n, q)) {
      n.backtrack.insert(q);
    }
  }

  int bound_;
  std::vector<Node> stack_;
  std::unordered_set<size_t> classes_;
  int64_t schedules_ = 0;
  bool done_ = false;
  bool nondeterministic_ = false;
};

void parse_bound(const std::string& name, const std::string& arg, StrategyName* s) {
  s->param = parse_int_arg(name, arg, 0, 8);
}

std::unique_ptr<StrategyDriver> make_dpor_driver(const StrategyName& s, int, uint64_t) {
  return std::make_unique<DporDriver>(s.param);
}

}  // namespace

const StrategyFamily kDporFamily = {"dpor:P", StrategyName::Kind::kDpor, &parse_bound, &make_dpor_driver, nullptr,
                                    nullptr};

}  // namespace racelab
