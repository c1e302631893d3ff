#include "cli/cli_util.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/run_trial.h"
#include "engine/supervisor.h"

namespace racelab {
namespace cli {

nlohmann::json parse_knobs(const std::vector<std::string>& flags) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : flags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument(fmt::format("--knob '{}': expected NAME=VALUE", f));
    std::string value = f.substr(eq + 1);
    nlohmann::json v = nlohmann::json::parse(value, nullptr, false);
    out[f.substr(0, eq)] = v.is_discarded() ? nlohmann::json(value) : v;
  }
  return out;
}

TrialRunner make_runner(bool in_process, double timeout_s) {
  if (in_process) return [](const TrialSpec& t) { return run_trial(t); };
  auto counter = std::make_shared<int64_t>(1000000);
  return [timeout_s, counter](const TrialSpec& t) {
    TrialSpec s = t;
    s.trial = (*counter)++;  // distinct ids keep the worker's markers apart
    s.watchdog_s = std::max(0.2, timeout_s / 2);
    return default_supervisor().run(s, timeout_s);
  };
}

void print_summary(const CellSpec& spec, const CellSummary& sum) {
  std::printf("%s / %s / %s / %d threads: %lld trials in %.2f s (%.1f trials/s)\n",
              spec.scenario.empty() ? spec.workload.c_str() : spec.scenario.c_str(),
              spec.mitigation.empty() ? "default" : spec.mitigation.c_str(), spec.strategy.c_str(), spec.threads,
              static_cast<long long>(sum.trials), sum.wall_s, sum.wall_s > 0 ? sum.trials / sum.wall_s : 0.0);
  for (const auto& [outcome, n] : sum.by_outcome)
    std::printf("  %-16s %lld\n", outcome.c_str(), static_cast<long long>(n));
  double rate = sum.trials ? static_cast<double>(sum.failures) / static_cast<double>(sum.trials) : 0;
  std::printf("  failure rate     %.4f (%lld/%lld)\n", rate, static_cast<long long>(sum.failures),
              static_cast<long long>(sum.trials));
  if (sum.pct_floor > 0) std::printf("  pct floor        %.3g (guaranteed per-trial hit probability for a depth-d bug)\n", sum.pct_floor);
  if (spec.strategy.rfind("dfs:", 0) == 0)
    std::printf("  dfs verdict      %s\n", sum.exhausted ? "complete" : "incomplete");
  if (sum.first_failure_trial >= 0) {
    std::printf("  first failure    trial %lld", static_cast<long long>(sum.first_failure_trial));
    if (!sum.first_failure_schedule.empty()) std::printf(" (%s)", sum.first_failure_schedule.c_str());
    std::printf("\n");
  }
}

}  // namespace cli
}  // namespace racelab
