#include "engine/driver.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/dpor.h"
#include "engine/strategy.h"

namespace racelab {

using nlohmann::json;

double pct_floor(int n, int64_t k, int d) {
  if (n < 1 || k < 1 || d < 1) return 0;
  return 1.0 / (static_cast<double>(n) * std::pow(static_cast<double>(k), d - 1));
}

namespace {

class FixedDriver : public StrategyDriver {
 public:
  FixedDriver(json spec, bool controlled) : spec_(std::move(spec)) { controlled_ = controlled; }
  bool next(int64_t, json* spec) override {
    *spec = spec_;
    return true;
  }

 private:
  json spec_;
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

// Iterative DFS over the choice tree. Options at a step, in order: the
// requester (if it can continue), then the other runnable threads, the latter
// only while the preemption budget allows. Option 0 is always the
// non-preemptive default, which is what a follow spec does past its prefix.
class DfsDriver : public StrategyDriver {
 public:
  explicit DfsDriver(int p) : p_(p) {}
  bool next(int64_t, json* spec) override {
    if (done_) return false;
    std::vector<int> prefix;
    for (const auto& n : stack_) prefix.push_back(n.options[n.idx]);
    *spec = {{"kind", "follow"}, {"prefix", prefix}};
    return true;
  }
  void observe(const TrialResult& r) override {
    int64_t preemptions = 0;
    size_t i = 0;
    for (; i < r.decisions.size(); ++i) {
      const Decision& d = r.decisions[i];
      std::vector<int> options;
      if (d.requester_runnable) {
        options.push_back(d.requester);
        if (preemptions < p_)
          for (int t : d.runnable)
            if (t != d.requester) options.push_back(t);
      } else {
        options = d.runnable;
      }
      auto at = std::find(options.begin(), options.end(), d.thread);
      if (at == options.end()) {  // cannot happen unless the run ignored the spec
        nondeterministic_ = true;
        break;
      }
      size_t idx = static_cast<size_t>(at - options.begin());
      if (i < stack_.size()) {
        if (stack_[i].options != options || stack_[i].idx != idx) {
          // The same prefix led somewhere else: something the scheduler does
          // not control decided. Keep exploring, but the verdict is weakened.
          nondeterministic_ = true;
          stack_[i] = Node{options, idx};
        }
      } else {
        stack_.push_back(Node{options, idx});
      }
      if (d.preemption) ++preemptions;
    }
    if (i < stack_.size()) {
      stack_.resize(i);  // the run ended early (divergence, crash, hang)
      if (r.outcome == Outcome::kDivergence) nondeterministic_ = true;
    }
    while (!stack_.empty() && stack_.back().idx + 1 >= stack_.back().options.size()) stack_.pop_back();
    if (stack_.empty())
      done_ = true;
    else
      ++stack_.back().idx;
  }
  bool exhausted() const override { return done_ && !nondeterministic_; }
  std::string note() const override {
    if (nondeterministic_) return "dfs saw uncontrolled nondeterminism: the search may be incomplete";
    return done_ ? "dfs complete" : "dfs incomplete (budget ran out)";
  }

 private:
  struct Node {
    std::vector<int> options;
    size_t idx;
  };
  int p_;
  std::vector<Node> stack_;
  bool done_ = false;
  bool nondeterministic_ = false;
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

// The portfolio (the design and its reasons: engine/driver.h, kAutoCycle).
// Before the cell's first failure the arms take their turns round kAutoCycle;
// from then on each trial goes to the arm whose draw from Beta(1 + failures,
// 1 + trials - failures) is highest (Thompson sampling), so the arm that
// finds failures gets most of the remaining trials. Every arm learns from
// every trial, whichever arm ran it: SURW's step estimates and shared objects,
// PCT's k and n are facts about the program, not about the arm. (So SURW needs
// no calibration run of its own: the cycle starts with another arm.) Only the
// failure counts that steer Thompson sampling are each arm's own. Every spec
// names its arm ("via"), so the results say which strategy found each failure.
class AutoDriver : public StrategyDriver {
 public:
  // with_free (auto+os): a fourth arm, os, takes every kFreeTurn-th trial
  // until the first failure, and competes with the others after it.
  AutoDriver(int threads, uint64_t seed, bool with_free = false) : seed_(seed) {
    for (const char* name : kAutoArms) arms_.push_back(Arm{name, make_driver(name, threads, seed)});
    if (with_free) {
      free_arm_ = static_cast<int>(arms_.size());
      arms_.push_back(Arm{"os", make_driver("os", threads, seed)});
    }
  }
  bool next(int64_t trial, json* spec) override {
    std::mt19937_64 rng(mix_seed(seed_, static_cast<uint64_t>(trial) + 0x4155544f));
    for (size_t attempt = 0; attempt < std::size(kAutoCycle) + arms_.size(); ++attempt) {
      int pick = failures_ == 0 ? cycled() : sampled(rng);
      if (failures_ == 0 && free_arm_ >= 0 && trial % kFreeTurn == kFreeTurn - 1 && !arms_[free_arm_].done)
        pick = free_arm_;
      if (pick < 0) return false;
      Arm& a = arms_[pick];
      if (!a.driver->next(trial, spec)) {
        a.done = true;
        continue;
      }
      (*spec)["via"] = a.name;
      std::string sub = spec->value("label", "");
      (*spec)["label"] = sub.empty() ? "auto: " + a.name : "auto: " + a.name + " (" + sub + ")";
      last_ = pick;
      return true;
    }
    return false;
  }
  void observe(const TrialResult& r) override {
    for (Arm& a : arms_) a.driver->observe(r);
    if (last_ < 0) return;
    Arm& a = arms_[last_];
    ++a.trials;
    if (is_failure(r.outcome)) {
      ++a.failures;
      ++failures_;
    }
  }
  // The PCT arm's guarantee, for the trials that arm ran.
  double pct_floor() const override {
    for (const Arm& a : arms_)
      if (a.trials > 0 && a.driver->pct_params().d > 0) return a.driver->pct_floor();
    return 0;
  }
  PctParams pct_params() const override {
    for (const Arm& a : arms_)
      if (a.trials > 0 && a.driver->pct_params().d > 0) return a.driver->pct_params();
    return {};
  }
  std::string note() const override {
    std::string out = "auto:";
    for (const Arm& a : arms_) out += fmt::format(" {} {}/{}", a.name, a.failures, a.trials);
    return out + " (failures/trials per strategy)";
  }

 private:
  struct Arm {
    std::string name;
    std::unique_ptr<StrategyDriver> driver;
    int64_t trials = 0, failures = 0;
    bool done = false;
  };
  static constexpr int64_t kFreeTurn = 4;
  int free_arm_ = -1;
  // The next arm of the cycle that still has trials to give; -1: none has.
  int cycled() {
    for (size_t i = 0; i < std::size(kAutoCycle); ++i) {
      const int arm = kAutoCycle[turn_++ % std::size(kAutoCycle)];
      if (!arms_[arm].done) return arm;
    }
    return -1;
  }
  int sampled(std::mt19937_64& rng) const {
    int best = -1;
    double best_draw = -1;
    for (size_t i = 0; i < arms_.size(); ++i) {
      const Arm& a = arms_[i];
      if (a.done) continue;
      double x = std::gamma_distribution<double>(1.0 + static_cast<double>(a.failures), 1.0)(rng);
      double y = std::gamma_distribution<double>(1.0 + static_cast<double>(a.trials - a.failures), 1.0)(rng);
      double draw = x / (x + y);
      if (draw > best_draw) {
        best_draw = draw;
        best = static_cast<int>(i);
      }
    }
    return best;
  }
  uint64_t seed_;
  std::vector<Arm> arms_;
  int last_ = -1;
  uint64_t turn_ = 0;
  int64_t failures_ = 0;
};

class ReplayDriver : public StrategyDriver {
 public:
  explicit ReplayDriver(Schedule s) : schedule_(std::move(s)) {}
  bool next(int64_t, json* spec) override {
    *spec = schedule_.replay_spec().strategy;
    return true;
  }
  std::optional<uint64_t> fixed_seed() const override { return schedule_.seed; }

 private:
  Schedule schedule_;
};

// The bounds keep a typo from becoming a search that never ends: pct's depth
// spreads D-1 change points (beyond ~10 the guarantee 1/(n*k^(D-1)) is nil),
// dfs and dpor enumerate every schedule (class) with up to P preemptions (exponential in P).
int parse_param(const std::string& name, const std::string& text, int min, int max) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < min || v > max)
    throw std::invalid_argument(
        fmt::format("strategy '{}': expected an integer from {} to {} after ':', got '{}'", name, min, max, text));
  return v;
}

}  // namespace

const char* const kStrategySyntax =
    "os, os+jitter[:P], random, pct:D, pos, surw, dfs:P, dpor:P, auto, auto+os or replay:FILE";
const char* const kAutoArms[] = {"surw", "pos", "pct:3"};
const int kAutoCycle[] = {1, 0, 0, 2, 0, 0};

StrategyName parse_strategy(const std::string& name) {
  const std::string head = name.substr(0, name.find(':'));
  const std::string arg = name.find(':') == std::string::npos ? "" : name.substr(name.find(':') + 1);
  StrategyName s;
  if (name == "os") {
    s.kind = StrategyName::Kind::kOs;
  } else if (head == "os+jitter") {
    s.kind = StrategyName::Kind::kOsJitter;
    if (!arg.empty()) {
      try {
        s.jitter = std::stod(arg);
      } catch (const std::exception&) {
        s.jitter = -1;
      }
      if (!(s.jitter > 0 && s.jitter <= 1))
        throw std::invalid_argument(fmt::format("strategy '{}': expected a probability in (0,1] after ':'", name));
    }
  } else if (name == "random") {
    s.kind = StrategyName::Kind::kRandom;
  } else if (name == "pos") {
    s.kind = StrategyName::Kind::kPos;
  } else if (name == "surw") {
    s.kind = StrategyName::Kind::kSurw;
  } else if (name == "auto") {
    s.kind = StrategyName::Kind::kAuto;
  } else if (name == "auto+os") {
    s.kind = StrategyName::Kind::kAuto;
    s.param = 1;
  } else if (head == "pct") {
    s.kind = StrategyName::Kind::kPct;
    s.param = parse_param(name, arg, 1, 10);
  } else if (head == "dfs") {
    s.kind = StrategyName::Kind::kDfs;
    s.param = parse_param(name, arg, 0, 8);
  } else if (head == "dpor") {
    s.kind = StrategyName::Kind::kDpor;
    s.param = parse_param(name, arg, 0, 8);
  } else if (head == "replay") {
    if (arg.empty()) throw std::invalid_argument("strategy 'replay:': expected a schedule file or compact string");
    s.kind = StrategyName::Kind::kReplay;
    s.replay = arg;
  } else {
    throw std::invalid_argument(fmt::format("unknown strategy '{}' (expected {})", name, kStrategySyntax));
  }
  return s;
}

bool is_free_running(const std::string& strategy_name) {
  try {
    return !parse_strategy(strategy_name).controlled();
  } catch (const std::invalid_argument&) {
    return false;
  }
}

std::unique_ptr<StrategyDriver> make_driver(const std::string& name, int threads, uint64_t seed) {
  const StrategyName s = parse_strategy(name);
  switch (s.kind) {
    case StrategyName::Kind::kOs: return std::make_unique<FixedDriver>(json{{"kind", "free"}}, false);
    case StrategyName::Kind::kOsJitter:
      return std::make_unique<FixedDriver>(json{{"kind", "free"}, {"jitter", s.jitter}}, false);
    case StrategyName::Kind::kRandom: return std::make_unique<FixedDriver>(json{{"kind", "random"}}, true);
    case StrategyName::Kind::kPos: return std::make_unique<FixedDriver>(json{{"kind", "pos"}}, true);
    case StrategyName::Kind::kSurw: return std::make_unique<SurwDriver>(seed);
    case StrategyName::Kind::kAuto: return std::make_unique<AutoDriver>(threads, seed, s.param == 1);
    case StrategyName::Kind::kPct: return std::make_unique<PctDriver>(s.param, threads);
    case StrategyName::Kind::kDfs: return std::make_unique<DfsDriver>(s.param);
    case StrategyName::Kind::kDpor: return make_dpor_driver(s.param);
    case StrategyName::Kind::kReplay: return std::make_unique<ReplayDriver>(load_schedule_arg(s.replay));
  }
  throw std::logic_error("make_driver: unhandled strategy kind");
}

}  // namespace racelab
