#include "engine/driver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

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
// dfs enumerates every schedule with up to P preemptions (exponential in P).
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

const char* const kStrategySyntax = "os, os+jitter[:P], random, pct:D, dfs:P or replay:FILE";

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
  } else if (head == "pct") {
    s.kind = StrategyName::Kind::kPct;
    s.param = parse_param(name, arg, 1, 10);
  } else if (head == "dfs") {
    s.kind = StrategyName::Kind::kDfs;
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

std::unique_ptr<StrategyDriver> make_driver(const std::string& name, int threads) {
  const StrategyName s = parse_strategy(name);
  switch (s.kind) {
    case StrategyName::Kind::kOs: return std::make_unique<FixedDriver>(json{{"kind", "free"}}, false);
    case StrategyName::Kind::kOsJitter:
      return std::make_unique<FixedDriver>(json{{"kind", "free"}, {"jitter", s.jitter}}, false);
    case StrategyName::Kind::kRandom: return std::make_unique<FixedDriver>(json{{"kind", "random"}}, true);
    case StrategyName::Kind::kPct: return std::make_unique<PctDriver>(s.param, threads);
    case StrategyName::Kind::kDfs: return std::make_unique<DfsDriver>(s.param);
    case StrategyName::Kind::kReplay: return std::make_unique<ReplayDriver>(load_schedule_arg(s.replay));
  }
  throw std::logic_error("make_driver: unhandled strategy kind");
}

}  // namespace racelab
