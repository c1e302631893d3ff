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

int default_choice(const ChoiceContext& ctx) {
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
// requester's priority drops below every initial priority.
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

// Follows a recorded list of threads; `strict_end` decides what happens past it.
class FollowStrategy : public Strategy {
 public:
  struct Step {
    int thread;
    std::string point;  // empty: not checked
  };
  FollowStrategy(std::vector<Step> steps, bool strict) : steps_(std::move(steps)), strict_(strict) {}
  int choose(const ChoiceContext& ctx, std::string* why) override {
    if (ctx.step >= static_cast<int64_t>(steps_.size())) {
      if (!strict_) return default_choice(ctx);
      *why = fmt::format("the schedule has {} decisions but the program asked for step {}", steps_.size(), ctx.step);
      return -1;
    }
    const Step& s = steps_[ctx.step];
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
    bad("kind", "one of random|pct|follow|replay|preempt", spec.is_object() ? spec.value("kind", json()) : spec);
  std::string kind = spec["kind"].get<std::string>();
  if (kind == "random") return std::make_unique<RandomStrategy>(seed);
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
        steps.push_back({t.get<int>(), ""});
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
      steps.push_back({t.get<int>(), point});
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
  bad("kind", "one of random|pct|follow|replay|preempt", spec["kind"]);
}

}  // namespace racelab
