#include "campaign/minimize_timelines.h"

#include <cstdio>
#include <exception>

#include "engine/driver.h"
#include "engine/minimize.h"
#include "engine/schedule.h"
#include "engine/python_host.h"
#include "engine/run_trial.h"
#include "engine/supervisor.h"
#include "campaign/scenario.h"

namespace racelab::campaign {

std::string minimized_schedule_path(const std::string& schedule_file) {
  const std::string ext = ".json";
  if (schedule_file.size() > ext.size() && schedule_file.compare(schedule_file.size() - ext.size(), ext.size(), ext) == 0)
    return schedule_file.substr(0, schedule_file.size() - ext.size()) + ".min.json";
  return schedule_file + ".min.json";
}

bool minimize_timelines(const nlohmann::json& report, int64_t max_trials_each) {
  bool wrote = false;
  for (const auto& s : report["scenarios"]) {
    const auto& tl = s["timeline"];
    if (tl.is_null() || tl["schedule"].is_null() || tl.value("minimized", false)) continue;
    if (is_free_running(tl["strategy"].get<std::string>())) continue;
    const std::string path = tl["original_schedule_file"].get<std::string>();
    try {
      const Schedule input = load_schedule(path);
      std::fprintf(stderr, "minimising the %s schedule (%lld preemptions) ... ", s["name"].get<std::string>().c_str(),
                   static_cast<long long>(tl["schedule"].value("preemptions", 0)));
      std::fflush(stderr);
      const MinimizeResult r = minimize(
          input, [](const TrialSpec& ts) { return supervisor_for(require_workload(ts.workload)).run(ts, 30.0); }, max_trials_each);
      if (!r.ok) {
        std::fprintf(stderr, "kept as found (%s)\n", r.error.c_str());
        continue;
      }
      save_schedule(r.schedule, minimized_schedule_path(path));
      std::fprintf(stderr, "%lld preemptions after %lld replays\n", static_cast<long long>(r.preemptions_after),
                   static_cast<long long>(r.trials));
      wrote = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cannot minimise %s: %s\n", path.c_str(), e.what());
    }
  }
  return wrote;
}

}  // namespace racelab::campaign
