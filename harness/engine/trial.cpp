#include "engine/trial.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>

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

namespace {

// Everything of a result but its decisions and events, which to_json and
// to_wire_json each write in their own form: one list of fields, so that the
// worker's line cannot lose a field the object form has.
json result_fields(const TrialResult& r) {
  return json{{"outcome", outcome_name(r.outcome)}, {"detail", r.detail},
              {"failing_step", r.failing_step},    {"steps", r.steps},
              {"preemptions", r.preemptions},      {"managed_threads", r.managed_threads},
              {"uncontrolled", r.uncontrolled},    {"wall_ms", r.wall_ms},
              {"metrics", r.metrics},              {"process_tainted", r.process_tainted}};
}

}  // namespace

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
  json j = result_fields(*this);
  j["decisions"] = std::move(ds);
  j["events"] = std::move(es);
  return j;
}

namespace {

// The packed form (to_wire_json): integers separated by spaces, strings as
// indices into "strings". A decision is
//   step thread point preemption requester requester_runnable object write let_go
//   #runnable runnable... #touched touched...
// (write is 1 where object < 0, as the object form reads an absent "access"),
// an event is step thread kind what.
class Packer {
 public:
  void put(int64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    if (!out_.empty()) out_ += ' ';
    out_.append(buf, res.ptr);
  }
  void put_string(const std::string& s, std::unordered_map<std::string, int64_t>* index, json* table) {
    auto [it, fresh] = index->emplace(s, static_cast<int64_t>(index->size()));
    if (fresh) table->push_back(s);
    put(it->second);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Unpacker {
 public:
  Unpacker(const std::string& text, const char* what) : p_(text.c_str()), end_(text.c_str() + text.size()), what_(what) {}
  bool done() {
    while (p_ < end_ && *p_ == ' ') ++p_;
    return p_ >= end_;
  }
  int64_t next() {
    if (done()) fail();
    char* stop = nullptr;
    errno = 0;
    const long long v = std::strtoll(p_, &stop, 10);
    if (stop == p_ || errno != 0) fail();
    p_ = stop;
    return v;
  }
  int64_t count() {
    const int64_t n = next();
    if (n < 0 || n > end_ - p_) fail();  // each element takes at least a byte
    return n;
  }
  const std::string& string(const std::vector<std::string>& table) {
    const int64_t i = next();
    if (i < 0 || i >= static_cast<int64_t>(table.size())) fail();
    return table[static_cast<size_t>(i)];
  }
  [[noreturn]] void fail() const { throw std::runtime_error(std::string("trial result: malformed ") + what_); }

 private:
  const char* p_;
  const char* end_;
  const char* what_;
};

}  // namespace

json TrialResult::to_wire_json() const {
  json strings = json::array();
  std::unordered_map<std::string, int64_t> index;
  Packer ds;
  for (const auto& d : decisions) {
    ds.put(d.step);
    ds.put(d.thread);
    ds.put_string(d.point, &index, &strings);
    ds.put(d.preemption);
    ds.put(d.requester);
    ds.put(d.requester_runnable);
    ds.put(d.object);
    ds.put(d.object >= 0 ? d.write : true);
    ds.put(d.let_go);
    ds.put(static_cast<int64_t>(d.runnable.size()));
    for (int t : d.runnable) ds.put(t);
    ds.put(static_cast<int64_t>(d.touched.size()));
    for (int t : d.touched) ds.put(t);
  }
  Packer es;
  for (const auto& e : events) {
    es.put(e.step);
    es.put(e.thread);
    es.put_string(e.kind, &index, &strings);
    es.put_string(e.what, &index, &strings);
  }
  json j = result_fields(*this);
  j["strings"] = std::move(strings);
  j["decisions_packed"] = ds.take();
  j["events_packed"] = es.take();
  return j;
}

TrialResult TrialResult::from_json(const json& j) {
  TrialResult r;
  if (!parse_outcome(j.at("outcome").get<std::string>(), &r.outcome))
    throw std::runtime_error("trial result: unknown outcome " + j.at("outcome").dump());
  r.detail = j.value("detail", "");
  r.failing_step = j.value("failing_step", int64_t{-1});
  std::vector<std::string> strings;
  if (j.contains("strings")) strings = j.at("strings").get<std::vector<std::string>>();
  if (j.contains("decisions_packed")) {
    Unpacker in(j.at("decisions_packed").get_ref<const std::string&>(), "decisions_packed");
    while (!in.done()) {
      Decision d;
      d.step = in.next();
      d.thread = static_cast<int>(in.next());
      d.point = in.string(strings);
      d.preemption = in.next() != 0;
      d.requester = static_cast<int>(in.next());
      d.requester_runnable = in.next() != 0;
      d.object = static_cast<int>(in.next());
      d.write = in.next() != 0;
      d.let_go = in.next() != 0;
      d.runnable.resize(static_cast<size_t>(in.count()));
      for (int& t : d.runnable) t = static_cast<int>(in.next());
      d.touched.resize(static_cast<size_t>(in.count()));
      for (int& t : d.touched) t = static_cast<int>(in.next());
      r.decisions.push_back(std::move(d));
    }
  }
  if (j.contains("events_packed")) {
    Unpacker in(j.at("events_packed").get_ref<const std::string&>(), "events_packed");
    while (!in.done()) {
      Event e;
      e.step = in.next();
      e.thread = static_cast<int>(in.next());
      e.kind = in.string(strings);
      e.what = in.string(strings);
      r.events.push_back(std::move(e));
    }
  }
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
