// pct:D -- probabilistic concurrency testing (Burckhardt et al., ASPLOS'10),
// for bugs of depth D (1 to 10: beyond ~10 the guarantee 1/(n*k^(D-1)) is
// nil). Trial spec {"kind":"pct","d":2,"k":120}: random priorities, d-1
// change points in [0,k). The driver learns k (the most steps seen so far; 64
// before the first trial) and n (the most managed threads seen), which give
// the guarantee pct_floor() (engine/driver.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "engine/strategies/family.h"

namespace racelab {

using nlohmann::json;

double pct_floor(int n, int64_t k, int d) {
  if (n < 1 || k < 1 || d < 1) return 0;
  return 1.0 / (static_cast<double>(n) * std::pow(static_cast<double>(k), d - 1));
}

namespace {

// The highest priority runnable thread runs; at each of d-1 random change
// points the requester's priority drops below every initial priority. A
// thread that steps aside (a yield or a sleep: it polls) drops below every
// priority, as the paper's treatment of yields has it: otherwise a
// high-priority poller runs again and again while the thread it waits for
// never does, and the trial ends at the step limit as a livelock the program
// does not have.
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

class PctDriver : public StrategyDriver {
 public:
  PctDriver(int d, int threads) : d_(d), n_(threads + 1) {}
  bool next(int64_t, json* spec) override {
    *spec = {{"kind", "pct"}, {"d", d_}, {"k", std::max<int64_t>(k_, 1)}};
    return true;
  }
  void observe(const TrialResult& r) override {
    if (!seen_) k_ = 0;
    seen_ = true;
    k_ = std::max(k_, r.steps);
    n_ = std::max(n_, r.managed_threads);
  }
  double pct_floor() const override { return racelab::pct_floor(n_, std::max<int64_t>(k_, 1), d_); }
  PctParams pct_params() const override { return {d_, std::max<int64_t>(k_, 1), n_}; }

 private:
  int d_;
  int n_;
  int64_t k_ = 64;  // a guess until the first trial measured it
  bool seen_ = false;
};

std::unique_ptr<Strategy> make_pct_strategy(const json& spec, uint64_t seed) {
  json d = spec.value("d", json()), k = spec.value("k", json());
  if (!d.is_number_integer() || d.get<int>() < 1) bad_spec("d", "an integer >= 1", d);
  if (!k.is_number_integer() || k.get<int64_t>() < 1) bad_spec("k", "an integer >= 1", k);
  return std::make_unique<PctStrategy>(d.get<int>(), k.get<int64_t>(), seed);
}

void parse_depth(const std::string& name, const std::string& arg, StrategyName* s) {
  s->param = parse_int_arg(name, arg, 1, 10);
}

std::unique_ptr<StrategyDriver> make_pct_driver(const StrategyName& s, int threads, uint64_t) {
  return std::make_unique<PctDriver>(s.param, threads);
}

}  // namespace

const StrategyFamily kPctFamily = {"pct:D", StrategyName::Kind::kPct, &parse_depth, &make_pct_driver,
                                   "pct", &make_pct_strategy};

}  // namespace racelab
