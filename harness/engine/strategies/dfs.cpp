// dfs:P -- depth-first over every schedule with at most P preemptions (0 to 8:
// the schedules grow exponentially in P); exhausted() once every one was
// tried (the `complete` verdict). Trial spec {"kind":"follow","prefix":[0,1,1]}:
// follow the prefix, then never preempt (strategies/follow.h). dpor:P sends
// the same specs (strategies/dpor.cpp).
#include <algorithm>
#include <vector>

#include "engine/strategies/family.h"
#include "engine/strategies/follow.h"

namespace racelab {

namespace {

using nlohmann::json;

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

std::unique_ptr<Strategy> make_prefix_strategy(const json& spec, uint64_t) {
  json prefix = spec.value("prefix", json());
  if (!prefix.is_array()) bad_spec("prefix", "an array of thread ids", prefix);
  std::vector<FollowStep> steps;
  for (const auto& t : prefix) {
    if (!t.is_number_integer()) bad_spec("prefix[]", "a thread id", t);
    steps.push_back({t.get<int>(), "", false});
  }
  return make_follow_strategy(std::move(steps), false);
}

void parse_bound(const std::string& name, const std::string& arg, StrategyName* s) {
  s->param = parse_int_arg(name, arg, 0, 8);
}

std::unique_ptr<StrategyDriver> make_dfs_driver(const StrategyName& s, int, uint64_t) {
  return std::make_unique<DfsDriver>(s.param);
}

}  // namespace

const StrategyFamily kDfsFamily = {"dfs:P", StrategyName::Kind::kDfs, &parse_bound, &make_dfs_driver, "follow",
                                   &make_prefix_strategy};

}  // namespace racelab
