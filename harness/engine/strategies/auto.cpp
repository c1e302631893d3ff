// auto and auto+os -- a portfolio of kAutoArms, with no Strategy of its own:
// each trial runs one arm's spec, and names it ("via"). A fixed cycle
// (kAutoCycle) until the cell's first failure, Thompson sampling on each
// arm's failures after it. auto+os adds a free-running arm (os): every fourth
// trial until the first failure, so a race that shows natively is never
// reported as holding because racelab serialised the code (pyrun's auto); a
// free trial's failure has no schedule to replay.
//
// Why these arms and shares. What counts for finding a bug is the trials
// before the first failure, and before it nothing tells the arms apart: no
// arm has a failure to learn from, so any learning rule just spreads the
// trials (Thompson sampling on zero failures gave each arm about a third,
// which left auto 2.5-3x behind the best arm). A fixed share instead gives a
// stated guarantee: if an arm finds the bug in a fraction p of its trials,
// auto finds it in at least share x p of its own, so auto's expected trials
// to the first failure are at most 1/share of that arm's -- 1.5x surw's, 6x
// pos's or pct:3's (and so is the median, where each trial fails with about
// the same chance). So the share follows the evidence of which arm is
// strongest:
//  - surw (4/6): the strongest sampler in the published SURW study (35 of 38
//    subjects at 10,000 schedules, PCT-3 33, POS 30) and the best single
//    strategy on every hard bug here (the README's search table). It lets
//    uninteresting steps run ahead and samples the interleavings of the
//    interesting ones uniformly, which is what a long prefix, a deep order or
//    many threads need.
//  - pos (1/6): samples racing steps evenly without any estimates, so it
//    still works where surw's estimates mislead (step counts that vary from
//    run to run, a bug among steps surw's interesting-set draw left out).
//  - pct:3 (1/6): the one arm with a proven bound, 1/(n k^2) per trial for a
//    bug of depth 3 or less, whatever the program; the grounds for a "holds"
//    verdict (reports) rest on it.
// The cycle starts with pos so that surw's first turn already has estimates
// (auto's arms learn from every trial) instead of spending a calibration run.
// After the first failure the question is a different one (how many more
// failures, for counts and minimisation), and the arm that found it is the
// evidence: Thompson sampling takes over.
#include <iterator>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "engine/strategies/family.h"

namespace racelab {

const char* const kAutoArms[] = {"surw", "pos", "pct:3"};
const int kAutoCycle[] = {1, 0, 0, 2, 0, 0};

namespace {

using nlohmann::json;

// Before the cell's first failure the arms take their turns round
// kAutoCycle; from then on each trial goes to the arm whose draw from
// Beta(1 + failures, 1 + trials - failures) is highest (Thompson sampling),
// so the arm that finds failures gets most of the remaining trials. Every arm
// learns from every trial, whichever arm ran it: SURW's step estimates and
// shared objects, PCT's k and n are facts about the program, not about the
// arm. (So SURW needs no calibration run of its own: the cycle starts with
// another arm.) Only the failure counts that steer Thompson sampling are each
// arm's own. Every spec names its arm ("via"), so the results say which
// strategy found each failure.
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

void parse_with_free(const std::string&, const std::string&, StrategyName* s) { s->param = 1; }

std::unique_ptr<StrategyDriver> make_auto_driver(const StrategyName& s, int threads, uint64_t seed) {
  return std::make_unique<AutoDriver>(threads, seed, s.param == 1);
}

}  // namespace

const StrategyFamily kAutoFamily = {"auto", StrategyName::Kind::kAuto, nullptr, &make_auto_driver, nullptr, nullptr};
const StrategyFamily kAutoOsFamily = {"auto+os", StrategyName::Kind::kAuto, &parse_with_free, &make_auto_driver,
                                      nullptr, nullptr};

}  // namespace racelab
