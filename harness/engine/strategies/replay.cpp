// replay:FILE|STRING -- every trial follows one recorded schedule exactly, or
// reports where the run diverged. Trial spec
// {"kind":"replay","decisions":[{"thread":1,"point":"a"},...]} (a decision
// may also be a bare thread id, and may carry "let_go": true); the driver
// sends the schedule's (Schedule::replay_spec) and pins the trial seed to
// the schedule's.
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "engine/schedule.h"
#include "engine/strategies/family.h"
#include "engine/strategies/follow.h"

namespace racelab {

namespace {

using nlohmann::json;

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

std::unique_ptr<Strategy> make_replay_strategy(const json& spec, uint64_t) {
  json ds = spec.value("decisions", json());
  if (!ds.is_array()) bad_spec("decisions", "an array", ds);
  std::vector<FollowStep> steps;
  for (size_t i = 0; i < ds.size(); ++i) {
    const json& d = ds[i];
    json t = d.is_object() ? d.value("thread", json()) : d;
    if (!t.is_number_integer() || t.get<int>() < 0)
      bad_spec(fmt::format("decisions[{}].thread", i), "a thread id >= 0", t);
    std::string point = d.is_object() ? d.value("point", "") : "";
    bool let_go = d.is_object() && d.value("let_go", false);
    steps.push_back({t.get<int>(), point, let_go});
  }
  return make_follow_strategy(std::move(steps), true);
}

void parse_schedule_arg(const std::string&, const std::string& arg, StrategyName* s) {
  if (arg.empty()) throw std::invalid_argument("strategy 'replay:': expected a schedule file or compact string");
  s->replay = arg;
}

// Throws ScheduleError for a bad file or string.
std::unique_ptr<StrategyDriver> make_replay_driver(const StrategyName& s, int, uint64_t) {
  return std::make_unique<ReplayDriver>(load_schedule_arg(s.replay));
}

}  // namespace

const StrategyFamily kReplayFamily = {"replay:FILE", StrategyName::Kind::kReplay, &parse_schedule_arg,
                                      &make_replay_driver, "replay", &make_replay_strategy};

}  // namespace racelab
