// TEMPORARY: TrialRecord's JSON form while the engine's cell.cpp does not exist.
#include "reports/trial_record.h"

#if !RACELAB_REPORTS_HAVE_ENGINE
namespace racelab {

nlohmann::json TrialRecord::to_json() const {
  return {{"scenario", scenario}, {"workload", workload}, {"mitigation", mitigation}, {"strategy", strategy},
          {"outcome", outcome},   {"detail", detail},     {"knobs", knobs},           {"threads", threads},
          {"seed", seed},         {"trial", trial},       {"steps", steps},           {"preemptions", preemptions},
          {"wall_ms", wall_ms},   {"compact", compact},   {"schedule_file", schedule_file},
          {"metrics", metrics}};
}

TrialRecord TrialRecord::from_json(const nlohmann::json& j) {
  TrialRecord r;
  r.scenario = j.value("scenario", "");
  r.workload = j.value("workload", "");
  r.mitigation = j.value("mitigation", "");
  r.strategy = j.value("strategy", "");
  r.outcome = j.value("outcome", "");
  r.detail = j.value("detail", "");
  r.knobs = j.value("knobs", nlohmann::json::object());
  r.threads = j.value("threads", 0);
  r.seed = j.value("seed", uint64_t{0});
  r.trial = j.value("trial", int64_t{0});
  r.steps = j.value("steps", int64_t{0});
  r.preemptions = j.value("preemptions", int64_t{0});
  r.wall_ms = j.value("wall_ms", 0.0);
  r.compact = j.value("compact", "");
  r.schedule_file = j.value("schedule_file", "");
  r.metrics = j.value("metrics", nlohmann::json::object());
  return r;
}

}  // namespace racelab
#endif
