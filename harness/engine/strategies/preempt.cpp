// preempt -- minimisation's strategy (engine/minimize.h), with no name of its
// own: trial spec {"kind":"preempt","set":[[A,k,B],...]}: when thread A makes
// its k-th request, switch to B; otherwise never preempt. So a failing
// schedule's preemptions can be tried one subset at a time.
#include <map>
#include <utility>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

using nlohmann::json;

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

std::unique_ptr<Strategy> make_preempt_strategy(const json& spec, uint64_t) {
  json set = spec.value("set", json());
  if (!set.is_array()) bad_spec("set", "an array of [thread, k, to]", set);
  std::map<std::pair<int, int64_t>, int> m;
  for (const auto& e : set) {
    if (!e.is_array() || e.size() != 3) bad_spec("set[]", "[thread, k, to]", e);
    m[{e[0].get<int>(), e[1].get<int64_t>()}] = e[2].get<int>();
  }
  return std::make_unique<PreemptStrategy>(std::move(m));
}

}  // namespace

const StrategyFamily kPreemptFamily = {nullptr, StrategyName::Kind::kOs, nullptr, nullptr, "preempt",
                                       &make_preempt_strategy};

}  // namespace racelab
