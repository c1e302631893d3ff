#include "engine/trial.h"

namespace racelab {

using nlohmann::json;

json TrialSpec::to_json() const {
  return json{{"scenario", scenario},   {"workload", workload},     {"mitigation", mitigation},
              {"knobs", knobs},         {"threads", threads},       {"seed", seed},
              {"trial", trial},         {"strategy_name", strategy_name}, {"strategy", strategy},
              {"watchdog_s", watchdog_s}, {"max_steps", max_steps}, {"record_events", record_events}};
}

TrialSpec TrialSpec::from_json(const json& j) {
  TrialSpec s;
  s.scenario = j.value("scenario", "");
  s.workload = j.at("workload").get<std::string>();
  s.mitigation = j.value("mitigation", "");
  s.knobs = j.value("knobs", json::object());
  s.threads = j.value("threads", 2);
  s.seed = j.value("seed", uint64_t{1});
  s.trial = j.value("trial", int64_t{0});
  s.strategy_name = j.value("strategy_name", "");
  s.strategy = j.value("strategy", json::object());
  s.watchdog_s = j.value("watchdog_s", 10.0);
  s.max_steps = j.value("max_steps", int64_t{200000});
  s.record_events = j.value("record_events", true);
  return s;
}

json decision_to_json(const Decision& d) {
  json j{{"step", d.step}, {"thread", d.thread}, {"point", d.point}, {"preemption", d.preemption}};
  if (d.object >= 0) {
    j["object"] = d.object;
    j["access"] = d.write ? "write" : "read";
  }
  if (d.let_go) j["let_go"] = true;  // only where it happened: older readers see no new key
  return j;
}

json event_to_json(const Event& e) {
  return json{{"step", e.step}, {"thread", e.thread}, {"kind", e.kind}, {"what", e.what}};
}

json TrialResult::to_json() const {
  json ds = json::array();
  for (const auto& d : decisions) {
    json x = decision_to_json(d);
    x["requester"] = d.requester;
    x["requester_runnable"] = d.requester_runnable;
    x["runnable"] = d.runnable;
    if (!d.touched.empty()) x["touched"] = d.touched;
    ds.push_back(std::move(x));
  }
  json es = json::array();
  for (const auto& e : events) es.push_back(event_to_json(e));
  return json{{"outcome", outcome_name(outcome)}, {"detail", detail},   {"failing_step", failing_step},
              {"decisions", ds},                  {"events", es},       {"steps", steps},
              {"preemptions", preemptions},       {"managed_threads", managed_threads},
              {"uncontrolled", uncontrolled},     {"wall_ms", wall_ms}, {"metrics", metrics},
              {"process_tainted", process_tainted}};
}

TrialResult TrialResult::from_json(const json& j) {
  TrialResult r;
  if (!parse_outcome(j.at("outcome").get<std::string>(), &r.outcome))
    throw std::runtime_error("trial result: unknown outcome " + j.at("outcome").dump());
  r.detail = j.value("detail", "");
  r.failing_step = j.value("failing_step", int64_t{-1});
  for (const auto& x : j.value("decisions", json::array())) {
    Decision d;
    d.step = x.at("step").get<int64_t>();
    d.thread = x.at("thread").get<int>();
    d.point = x.value("point", "");
    d.preemption = x.value("preemption", false);
    d.requester = x.value("requester", -1);
    d.requester_runnable = x.value("requester_runnable", false);
    d.runnable = x.value("runnable", std::vector<int>{});
    d.object = x.value("object", -1);
    d.write = x.value("access", "write") != "read";
    d.let_go = x.value("let_go", false);
    d.touched = x.value("touched", std::vector<int>{});
    r.decisions.push_back(std::move(d));
  }
  for (const auto& x : j.value("events", json::array())) {
    r.events.push_back(Event{x.at("step").get<int64_t>(), x.at("thread").get<int>(), x.at("kind").get<std::string>(), x.value("what", "")});
  }
  r.steps = j.value("steps", int64_t{0});
  r.preemptions = j.value("preemptions", int64_t{0});
  r.managed_threads = j.value("managed_threads", 0);
  r.uncontrolled = j.value("uncontrolled", int64_t{0});
  r.wall_ms = j.value("wall_ms", 0.0);
  r.metrics = j.value("metrics", json::object());
  r.process_tainted = j.value("process_tainted", false);
  return r;
}

}  // namespace racelab
