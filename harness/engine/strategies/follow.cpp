#include "engine/strategies/follow.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "engine/strategies/family.h"

namespace racelab {

namespace {

class FollowStrategy : public Strategy {
 public:
  FollowStrategy(std::vector<FollowStep> steps, bool strict) : steps_(std::move(steps)), strict_(strict) {}
  int choose(const ChoiceContext& ctx, std::string* why) override {
    if (ctx.step >= static_cast<int64_t>(steps_.size())) {
      if (!strict_) return default_choice(ctx);
      *why = fmt::format("the schedule has {} decisions but the program asked for step {}", steps_.size(), ctx.step);
      return -1;
    }
    const FollowStep& s = steps_[ctx.step];
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
  std::vector<FollowStep> steps_;
  bool strict_;
};

}  // namespace

std::unique_ptr<Strategy> make_follow_strategy(std::vector<FollowStep> steps, bool strict) {
  return std::make_unique<FollowStrategy>(std::move(steps), strict);
}

}  // namespace racelab
