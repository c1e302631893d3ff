// surw -- selectively uniform random walk (Zhao, Wolff, Mathur, Roychoudhury,
// ASPLOS 2025). Trial spec {"kind":"surw","interesting":["a.read",...],
// "counts":[[1,40],[2,3]]}: weights = estimated interesting steps left per
// thread ("interesting" absent: every step is). The driver makes the
// estimates: from a calibration trial (the cell's first, a random walk), then
// from all the cell's earlier trials.
#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

using nlohmann::json;

// A uniform random walk picks a thread with probability proportional to the
// steps it has left, which samples every interleaving equally often (a plain
// random walk favours the orders where long threads lag). "Selectively": the
// walk is uniform over the *interesting* steps only -- those at the point
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

// SURW's parent half: the estimates. The first trial is a calibration run (a
// random walk, labelled so in the results); every later trial's estimates are
// the means over all the cell's earlier trials of
//  - the steps each thread took at each point name that named an object, and
//    at points that named none;
//  - which objects were shared: touched by two threads or more, one of them
//    writing. An object is known across trials by the point names that touch
//    it (its address and number may differ from run to run).
// Each trial draws its interesting set afresh: every shared object is in it
// with probability 1/2 (at least one is), its steps are the points that touch
// it. Without shared objects (points that name none) every step is
// interesting: a uniform random walk.
class SurwDriver : public StrategyDriver {
 public:
  explicit SurwDriver(uint64_t seed) : seed_(seed) {}
  bool next(int64_t trial, json* spec) override {
    if (trials_ == 0) {
      *spec = {{"kind", "random"}, {"label", "surw calibration run (random walk)"}};
      return true;
    }
    std::mt19937_64 rng(mix_seed(seed_, static_cast<uint64_t>(trial)));
    std::set<std::string> names;
    std::vector<std::string> chosen;
    for (const auto& [key, group] : groups_)
      if (std::bernoulli_distribution(0.5)(rng)) {
        chosen.push_back(key);
        names.insert(group.begin(), group.end());
      }
    if (chosen.empty() && !groups_.empty()) {
      auto it = std::next(groups_.begin(), std::uniform_int_distribution<size_t>(0, groups_.size() - 1)(rng));
      chosen.push_back(it->first);
      names.insert(it->second.begin(), it->second.end());
    }
    const bool all = groups_.empty();
    json counts = json::array();
    for (const auto& [t, total] : total_) {
      double c = all ? total : unnamed_[t];
      if (!all)
        for (const auto& n : names) c += named_[t][n];
      counts.push_back(json::array({t, c / static_cast<double>(trials_)}));
    }
    *spec = {{"kind", "surw"},
             {"counts", counts},
             {"label", fmt::format("surw: estimates from the {} earlier trial(s) of this cell; interesting: {}", trials_,
                                   all ? std::string("every step (no shared objects named)")
                                       : fmt::format("{}", fmt::join(chosen, ", ")))}};
    if (!all) (*spec)["interesting"] = names;
    return true;
  }
  void observe(const TrialResult& r) override {
    struct Obj {
      std::set<std::string> names;
      std::set<int> threads;
      bool written = false;
    };
    std::map<int, Obj> objects;
    for (const Decision& d : r.decisions) {
      total_[d.thread] += 1;
      if (d.object < 0) {
        unnamed_[d.thread] += 1;
        continue;
      }
      named_[d.thread][d.point] += 1;
      Obj& o = objects[d.object];
      o.names.insert(d.point);
      o.threads.insert(d.thread);
      o.written |= d.write;
    }
    for (const auto& [id, o] : objects)
      if (o.threads.size() >= 2 && o.written)
        groups_[fmt::format("{}", fmt::join(o.names, "|"))] = std::vector<std::string>(o.names.begin(), o.names.end());
    ++trials_;
  }

 private:
  uint64_t seed_;
  int64_t trials_ = 0;
  std::map<int, double> total_, unnamed_;
  std::map<int, std::map<std::string, double>> named_;
  std::map<std::string, std::vector<std::string>> groups_;  // shared object (its point names joined) -> names
};

std::unique_ptr<Strategy> make_surw_strategy(const json& spec, uint64_t seed) {
  json names = spec.value("interesting", json()), counts = spec.value("counts", json());
  std::set<std::string> interesting;
  if (!names.is_null()) {
    if (!names.is_array()) bad_spec("interesting", "an array of point names", names);
    for (const auto& n : names) {
      if (!n.is_string()) bad_spec("interesting[]", "a point name", n);
      interesting.insert(n.get<std::string>());
    }
  }
  std::map<int, double> per_thread;
  if (!counts.is_null()) {
    if (!counts.is_array()) bad_spec("counts", "an array of [thread, steps]", counts);
    for (const auto& e : counts) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number())
        bad_spec("counts[]", "[thread, steps]", e);
      per_thread[e[0].get<int>()] = e[1].get<double>();
    }
  }
  return std::make_unique<SurwStrategy>(std::move(interesting), names.is_null(), std::move(per_thread), seed);
}

std::unique_ptr<StrategyDriver> make_surw_driver(const StrategyName&, int, uint64_t seed) {
  return std::make_unique<SurwDriver>(seed);
}

}  // namespace

const StrategyFamily kSurwFamily = {"surw", StrategyName::Kind::kSurw, nullptr, &make_surw_driver, "surw",
                                    &make_surw_strategy};

}  // namespace racelab
