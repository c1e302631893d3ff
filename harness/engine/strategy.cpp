#include "engine/strategy.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace racelab {

using nlohmann::json;

uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool dependent(const Footprint& a, const Footprint& b) {
  if (a.object < 0 || b.object < 0) return true;
  return a.object == b.object && (a.write || b.write);
}

int starved_thread(const ChoiceContext& ctx) {
  if (ctx.fair_steps <= 0 || ctx.waiting_since == nullptr) return -1;
  int best = -1;
  int64_t since = ctx.step - ctx.fair_steps + 1;
  for (int t : *ctx.runnable) {
    if (static_cast<size_t>(t) >= ctx.waiting_since->size()) continue;
    const int64_t w = (*ctx.waiting_since)[t];
    if (w >= 0 && w < since) {
      since = w;
      best = t;
    }
  }
  return best;
}

int default_choice(const ChoiceContext& ctx) {
  if (int t = starved_thread(ctx); t >= 0) return t;
  if (ctx.requester_runnable) return ctx.requester;
  return ctx.runnable->front();
}

namespace {

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

class RandomStrategy : public Strategy {
 public:
  explicit RandomStrategy(uint64_t seed) : rng_(mix_seed(seed, 0x52414e44)) {}
  int choose(const ChoiceContext& ctx, std::string*) override {
    std::uniform_int_distribution<size_t> pick(0, ctx.runnable->size() - 1);
    return (*ctx.runnable)[pick(rng_)];
  }

 private:
  std::mt19937_64 rng_;
};

// Probabilistic concurrency testing (Burckhardt et al., ASPLOS'10): the highest
// priority runnable thread runs; at each of d-1 random change points the
// requester's priority drops below every initial priority. A thread that
// steps aside (a yield or a sleep: it polls) drops below every priority, as
// the paper's treatment of yields has it: otherwise a high-priority poller
// runs again and again while the thread it waits for never does, and the
// trial ends at the step limit as a livelock the program does not have.
class PctStrategy : public Strategy {
 public:
  PctStrategy(int d, int64_t k, uint64_t seed) : d_(d), rng_(mix_seed(seed, 0x504354)) {
    std::uniform_int_distribution<int64_t> step(0, std::max<int64_t>(k, 1) - 1);
    for (int i = 1; i < d_; ++i) change_points_[step(rng_)] = d_ - i;  // first change point: highest low priority
  }
  int choose(const ChoiceContext& ctx, std::string*) override {
    for (int t : *ctx.runnable) priority_of(t);
    priority_of(ctx.requester);
    auto cp = change_points_.find(ctx.step);
    if (cp != change_points_.end()) priorities_[ctx.requester] = cp->second;
    if (ctx.requester_yielded) {
      double lowest = priorities_[ctx.requester];
      for (const auto& [t, p] : priorities_) lowest = std::min(lowest, p);
      priorities_[ctx.requester] = lowest - 1;
    }
    if (int t = starved_thread(ctx); t >= 0) return t;
    int best = ctx.runnable->front();
    for (int t : *ctx.runnable)
      if (priorities_[t] > priorities_[best]) best = t;
    return best;
  }

 private:
  double priority_of(int t) {
    auto it = priorities_.find(t);
    if (it != priorities_.end()) return it->second;
    // Initial priorities are distinct random values above every change-point priority.
    double p = d_ + std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
    priorities_[t] = p;
    return p;
  }
  int d_;
  std::mt19937_64 rng_;
  std::map<int64_t, double> change_points_;
  std::map<int, double> priorities_;
};

// Partial order sampling (Yuan, Yang, Gu, CAV 2018). Every pending step has a
// random priority and the highest-priority runnable step runs. Once a step
// ran, its thread's next step and every waiting step that races with the one
// that ran (engine/strategy.h dependent()) draw fresh priorities; independent
// steps keep theirs. So the relative order of independent steps is left
// alone and each ordering of racing steps is sampled about evenly, where a
// random walk over-samples the orders that many independent steps reach by
// chance. With no objects named every step races with every other and POS is
// a random walk. A polling thread (its pending step is a yield or a sleep)
// draws its priority below every working thread's, so pollers run when
// nothing else can, in a random order among themselves.
class PosStrategy : public Strategy {
 public:
  explicit PosStrategy(uint64_t seed) : rng_(mix_seed(seed, 0x504f53)) {}
  int choose(const ChoiceContext& ctx, std::string*) override {
    const std::vector<Footprint>& fp = *ctx.footprints;
    if (last_ >= 0) {
      fresh(last_);
      for (int t : *ctx.runnable)
        if (t != last_ && static_cast<size_t>(t) < fp.size() && dependent(fp[t], last_fp_)) fresh(t);
    }
    if (ctx.requester_yielded) lower(ctx.requester);
    for (int t : *ctx.runnable)
      if (is_polling(ctx, t) && (static_cast<size_t>(t) >= priorities_.size() || priorities_[t] >= -1.0)) lower(t);
    if (int t = starved_thread(ctx); t >= 0) {
      last_ = t;
      last_fp_ = static_cast<size_t>(t) < fp.size() ? fp[t] : Footprint{};
      return t;
    }
    int best = -1;
    for (int t : *ctx.runnable) {
      if (static_cast<size_t>(t) >= priorities_.size() || (priorities_[t] < 0 && priorities_[t] >= -1.0)) fresh(t);
      if (best < 0 || priorities_[t] > priorities_[best]) best = t;
    }
    last_ = best;
    last_fp_ = static_cast<size_t>(best) < fp.size() ? fp[best] : Footprint{};
    return best;
  }

 private:
  void fresh(int t) {
    if (static_cast<size_t>(t) >= priorities_.size()) priorities_.resize(t + 1, -1.0);
    priorities_[t] = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  }
  void lower(int t) {  // below every fresh draw, still random among the lowered
    if (static_cast<size_t>(t) >= priorities_.size()) priorities_.resize(t + 1, -1.0);
    priorities_[t] = std::uniform_real_distribution<double>(-2.0, -1.0)(rng_);
  }
  std::mt19937_64 rng_;
  std::vector<double> priorities_;  // per thread, for its pending step; -1: none drawn yet; < -1: lowered (polls)
  int last_ = -1;
  Footprint last_fp_;
};

// Selectively uniform random walk (Zhao, Wolff, Mathur, Roychoudhury, ASPLOS
// 2025). A uniform random walk picks a thread with probability proportional
// to the steps it has left, which samples every interleaving equally often (a
// plain random walk favours the orders where long threads lag). "Selectively":
// the walk is uniform over the *interesting* steps only -- those at the point
// names listed (racelab: the points of a random subset of the shared objects,
// chosen per trial by the driver) and every step that names no object.
// Uninteresting steps run as soon as their thread can run them: they do not
// change the order of interesting steps, so every interleaving of those stays
// possible. Remaining-step counts are estimates the driver passes in (from a
// calibration run or the cell's earlier trials); a thread that outruns its
// estimate keeps weight 1. Threads not yet created count towards thread 0,
// which creates them in racelab's workloads. A polling thread (its pending
// step is a yield or a sleep) weighs 1 whatever its estimate: its polls are
// not interesting steps, and a calibration run counts many of them.
class SurwStrategy : public Strategy {
 public:
  SurwStrategy(std::set<std::string> interesting, bool all, std::map<int, double> counts, uint64_t seed)
      : interesting_(std::move(interesting)), all_(all), counts_(std::move(counts)), rng_(mix_seed(seed, 0x53555257)) {}
  int choose(const ChoiceContext& ctx, std::string*) override {
    const std::vector<Footprint>& fp = *ctx.footprints;
    const std::vector<const char*>& pending = *ctx.pending;
    auto is_interesting = [&](int t) {
      if (all_) return true;
      if (static_cast<size_t>(t) >= fp.size() || fp[t].object < 0) return true;
      const char* at = static_cast<size_t>(t) < pending.size() ? pending[t] : nullptr;
      return at != nullptr && interesting_.count(at) > 0;
    };
    if (int t = starved_thread(ctx); t >= 0) return t;
    std::vector<int> plain;
    for (int t : *ctx.runnable)
      if (!is_interesting(t)) plain.push_back(t);
    if (!plain.empty()) {
      if (ctx.requester_runnable && contains(plain, ctx.requester)) return ctx.requester;
      return plain[std::uniform_int_distribution<size_t>(0, plain.size() - 1)(rng_)];
    }
    const int known = static_cast<int>(fp.size());
    std::vector<double> w;
    double total = 0;
    for (int t : *ctx.runnable) {
      double left = is_polling(ctx, t) ? 1.0 : remaining(t);
      if (t == 0 && !is_polling(ctx, t))
        for (const auto& [u, c] : counts_)
          if (u >= known) left += c;  // threads thread 0 has yet to create
      w.push_back(left);
      total += left;
    }
    double x = std::uniform_real_distribution<double>(0.0, total)(rng_);
    size_t i = 0;
    for (; i + 1 < w.size() && x >= w[i]; ++i) x -= w[i];
    int chosen = (*ctx.runnable)[i];
    ++done_[chosen];
    return chosen;
  }

 private:
  double remaining(int t) const {
    auto c = counts_.find(t);
    auto d = done_.find(t);
    double left = (c == counts_.end() ? 1.0 : c->second) - (d == done_.end() ? 0 : d->second);
    return std::max(1.0, left);
  }
  std::set<std::string> interesting_;
  bool all_;
  std::map<int, double> counts_;  // per thread: interesting steps expected in a whole trial
  std::map<int, int64_t> done_;   // per thread: interesting steps taken so far
  std::mt19937_64 rng_;
};

// Follows a recorded list of threads; `strict_end` decides what happens past it.
class FollowStrategy : public Strategy {
 public:
  struct Step {
    int thread;
    std::string point;  // empty: not checked
    bool let_go = false;  // the recorded run let its requester go here (time, not the program)
  };
  FollowStrategy(std::vector<Step> steps, bool strict) : steps_(std::move(steps)), strict_(strict) {}
  int choose(const ChoiceContext& ctx, std::string* why) override {
    if (ctx.step >= static_cast<int64_t>(steps_.size())) {
      if (!strict_) return default_choice(ctx);
      *why = fmt::format("the schedule has {} decisions but the program asked for step {}", steps_.size(), ctx.step);
      return -1;
    }
    const Step& s = steps_[ctx.step];
    if (strict_ && s.let_go != ctx.let_go) {
      // Where a thread was let go, the run depended on time: say so rather
      // than report a bare mismatch further on.
      *why = s.let_go
                 ? fmt::format("step {}: determinism was lost here: the recorded run let thread {} go after an "
                               "uncontrolled wait (no scheduling point within the bound), this run reached a point",
                               ctx.step, ctx.requester)
                 : fmt::format("step {}: determinism was lost here: thread {} was let go after an uncontrolled wait "
                               "(no scheduling point within the bound), which the recorded run did not do",
                               ctx.step, ctx.requester);
      return -1;
    }
    if (!contains(*ctx.runnable, s.thread)) {
      *why = fmt::format("step {}: the schedule chooses thread {}, but only threads [{}] can run", ctx.step,
                         s.thread, fmt::join(*ctx.runnable, ","));
      return -1;
    }
    if (!s.point.empty()) {
      const char* at = static_cast<size_t>(s.thread) < ctx.pending->size() ? (*ctx.pending)[s.thread] : nullptr;
      std::string here = at ? at : "";
      if (here != s.point) {
        *why = fmt::format("step {}: the schedule has thread {} at point '{}', but it is at '{}'", ctx.step,
                           s.thread, s.point, here);
        return -1;
      }
    }
    return s.thread;
  }

 private:
  std::vector<Step> steps_;
  bool strict_;
};

class PreemptStrategy : public Strategy {
 public:
  explicit PreemptStrategy(std::map<std::pair<int, int64_t>, int> set) : set_(std::move(set)) {}
  int choose(const ChoiceContext& ctx, std::string*) override {
    int64_t k = requests_[ctx.requester]++;
    auto it = set_.find({ctx.requester, k});
    if (it != set_.end() && contains(*ctx.runnable, it->second)) return it->second;
    return default_choice(ctx);
  }

 private:
  std::map<std::pair<int, int64_t>, int> set_;
  std::map<int, int64_t> requests_;
};

[[noreturn]] void bad(const std::string& field, const std::string& expected, const json& got) {
  throw std::invalid_argument(fmt::format("strategy spec: field '{}': expected {}, got {}", field, expected,
                                          got.is_null() ? std::string("nothing") : got.dump()));
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(const json& spec, uint64_t seed) {
  if (!spec.is_object() || !spec.contains("kind") || !spec["kind"].is_string())
    bad("kind", "one of random|pct|pos|surw|follow|replay|preempt", spec.is_object() ? spec.value("kind", json()) : spec);
  std::string kind = spec["kind"].get<std::string>();
  if (kind == "random") return std::make_unique<RandomStrategy>(seed);
  if (kind == "pos") return std::make_unique<PosStrategy>(seed);
  if (kind == "surw") {
    json names = spec.value("interesting", json()), counts = spec.value("counts", json());
    std::set<std::string> interesting;
    if (!names.is_null()) {
      if (!names.is_array()) bad("interesting", "an array of point names", names);
      for (const auto& n : names) {
        if (!n.is_string()) bad("interesting[]", "a point name", n);
        interesting.insert(n.get<std::string>());
      }
    }
    std::map<int, double> per_thread;
    if (!counts.is_null()) {
      if (!counts.is_array()) bad("counts", "an array of [thread, steps]", counts);
      for (const auto& e : counts) {
        if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number())
          bad("counts[]", "[thread, steps]", e);
        per_thread[e[0].get<int>()] = e[1].get<double>();
      }
    }
    return std::make_unique<SurwStrategy>(std::move(interesting), names.is_null(), std::move(per_thread), seed);
  }
  if (kind == "pct") {
    json d = spec.value("d", json()), k = spec.value("k", json());
    if (!d.is_number_integer() || d.get<int>() < 1) bad("d", "an integer >= 1", d);
    if (!k.is_number_integer() || k.get<int64_t>() < 1) bad("k", "an integer >= 1", k);
    return std::make_unique<PctStrategy>(d.get<int>(), k.get<int64_t>(), seed);
  }
  if (kind == "follow" || kind == "replay") {
    std::vector<FollowStrategy::Step> steps;
    if (kind == "follow") {
      json prefix = spec.value("prefix", json());
      if (!prefix.is_array()) bad("prefix", "an array of thread ids", prefix);
      for (const auto& t : prefix) {
        if (!t.is_number_integer()) bad("prefix[]", "a thread id", t);
        steps.push_back({t.get<int>(), "", false});
      }
      return std::make_unique<FollowStrategy>(std::move(steps), false);
    }
    json ds = spec.value("decisions", json());
    if (!ds.is_array()) bad("decisions", "an array", ds);
    for (size_t i = 0; i < ds.size(); ++i) {
      const json& d = ds[i];
      json t = d.is_object() ? d.value("thread", json()) : d;
      if (!t.is_number_integer() || t.get<int>() < 0)
        bad(fmt::format("decisions[{}].thread", i), "a thread id >= 0", t);
      std::string point = d.is_object() ? d.value("point", "") : "";
      bool let_go = d.is_object() && d.value("let_go", false);
      steps.push_back({t.get<int>(), point, let_go});
    }
    return std::make_unique<FollowStrategy>(std::move(steps), true);
  }
  if (kind == "preempt") {
    json set = spec.value("set", json());
    if (!set.is_array()) bad("set", "an array of [thread, k, to]", set);
    std::map<std::pair<int, int64_t>, int> m;
    for (const auto& e : set) {
      if (!e.is_array() || e.size() != 3) bad("set[]", "[thread, k, to]", e);
      m[{e[0].get<int>(), e[1].get<int64_t>()}] = e[2].get<int>();
    }
    return std::make_unique<PreemptStrategy>(std::move(m));
  }
  bad("kind", "one of random|pct|pos|surw|follow|replay|preempt", spec["kind"]);
}

}  // namespace racelab
