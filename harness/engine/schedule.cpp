#include "engine/schedule.h"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

#include "engine/unique_keys.h"
#include "racelab/atomic_file.h"

#ifndef RACELAB_VERSION
#define RACELAB_VERSION "unknown"
#endif

namespace racelab {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& source, const std::string& field, const std::string& expected,
                      const json& got) {
  throw ScheduleError(fmt::format("{}: field '{}': expected {}, got {}", source, field, expected,
                                  got.is_null() ? std::string("nothing") : got.dump()));
}

// `name` is a const char*, not a std::string: a reference returned from a call with a
// temporary argument looks dangling to g++ 14 (-Wdangling-reference), and it is not.
const json& field(const json& j, const char* name) {
  static const json null_json;
  auto it = j.find(name);
  return it == j.end() ? null_json : *it;
}

std::string req_string(const json& j, const std::string& src, const std::string& name,
                       const std::string& label = "") {
  const json& v = field(j, name.c_str());
  if (!v.is_string()) bad(src, label.empty() ? name : label, "a string", v);
  return v.get<std::string>();
}

int64_t req_int(const json& j, const std::string& src, const std::string& name, int64_t min,
                const std::string& label = "") {
  const json& v = field(j, name.c_str());
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) || v.get<int64_t>() < min)
    bad(src, label.empty() ? name : label, fmt::format("an integer >= {}", min), v);
  return v.get<int64_t>();
}

// An integer field from 0 to `max` (a thread id, an object number, a step),
// checked whole before an int takes it: 4294967297 is refused, never read as 1.
int64_t req_bounded(const json& j, const std::string& src, const std::string& name, int64_t max,
                    const std::string& label, const std::string& what) {
  const json& v = field(j, name.c_str());
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) || v.get<int64_t>() < 0 ||
      v.get<int64_t>() > max)
    bad(src, label, fmt::format("{} from 0 to {}", what, max), v);
  return v.get<int64_t>();
}

// Thread counts: at most kMaxThreads workers, as `run -t` and scenario files
// allow. Managed thread ids run from 0 (the trial body) to kMaxThreadId
// (engine/trial.h).
constexpr int64_t kMaxThreads = 64;
// Decisions in one schedule: no trial may take more steps (exec --max-steps is at most this).
constexpr size_t kMaxDecisions = 10000000;
// The largest step an event or an outcome may name: past any trial's end (a
// trial ends at its step limit), so that a reader may add to it.
constexpr int64_t kMaxStep = 2 * static_cast<int64_t>(kMaxDecisions);

int req_threads(const json& v, const std::string& src) {
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX) || v.get<int64_t>() < 1 ||
      v.get<int64_t>() > kMaxThreads)
    bad(src, "threads", fmt::format("an integer from 1 to {}", kMaxThreads), v);
  return static_cast<int>(v.get<int64_t>());
}

// Unknown keys are errors, as in scenario files: a misspelt field
// ("prdemption") must not be dropped in silence.
void only_keys(const json& obj, const std::string& src, const std::string& at,
               std::initializer_list<const char*> keys) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : keys) known |= it.key() == k;
    if (!known) {
      std::string list;
      for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      throw ScheduleError(fmt::format("{}: field '{}{}': unknown key, expected one of {}", src, at.empty() ? "" : at + ".",
                                      it.key(), list));
    }
  }
}

// --- base64url (RFC 4648 §5), no padding ---
const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string b64_encode(const std::string& in) {
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buf = (buf << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kB64[(buf >> bits) & 63];
    }
  }
  if (bits > 0) out += kB64[(buf << (6 - bits)) & 63];
  return out;
}

bool b64_decode(const std::string& in, std::string* out) {
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const char* p = std::strchr(kB64, c);
    if (c == '\0' || p == nullptr) return false;
    buf = (buf << 6) | static_cast<uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return true;
}

std::string rle_encode(const std::vector<Decision>& ds) {
  std::string out;
  for (size_t i = 0; i < ds.size();) {
    size_t j = i;
    while (j < ds.size() && ds[j].thread == ds[i].thread) ++j;
    if (!out.empty()) out += '.';
    out += std::to_string(ds[i].thread);
    if (j - i > 1) out += "*" + std::to_string(j - i);
    i = j;
  }
  return out;
}

std::vector<int> rle_decode(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string tok;
  while (std::getline(ss, tok, '.')) {
    size_t star = tok.find('*');
    std::string t = tok.substr(0, star);
    std::string n = star == std::string::npos ? "1" : tok.substr(star + 1);
    size_t used = 0;
    int thread = -1;
    long count = 0;
    try {
      thread = std::stoi(t, &used);
      if (used != t.size()) throw std::invalid_argument(t);
      count = std::stol(n, &used);
      if (used != n.size()) throw std::invalid_argument(n);
    } catch (const std::exception&) {
      throw ScheduleError(fmt::format("compact form: field 'decisions': expected runs like 0*3.1, got '{}'", tok));
    }
    if (thread < 0 || thread > kMaxThreadId || count < 1 || static_cast<size_t>(count) > kMaxDecisions - out.size())
      throw ScheduleError(fmt::format("compact form: field 'decisions': bad run '{}' (thread ids 0 to {}, at most {} "
                                      "decisions)",
                                      tok, kMaxThreadId, kMaxDecisions));
    out.insert(out.end(), static_cast<size_t>(count), thread);
  }
  return out;
}

}  // namespace

json Schedule::to_json() const {
  json ds = json::array();
  for (const auto& d : decisions) ds.push_back(decision_to_json(d));
  json es = json::array();
  for (const auto& e : events) es.push_back(event_to_json(e));
  json j = {{"format", "racelab-schedule"},
            {"version", kScheduleVersion},
            {"racelab_version", racelab_version.empty() ? std::string(RACELAB_VERSION) : racelab_version},
            {"scenario", scenario},
            {"workload", workload},
            {"knobs", knobs},
            {"mitigation", mitigation},
            {"threads", threads},
            {"strategy", strategy},
            {"seed", seed},
            {"decisions", ds},
            {"events", es},
            {"outcome", {{"class", outcome_name(outcome)}, {"detail", detail}, {"failing_step", failing_step}}},
            {"preemptions", preemptions}};
  if (minimized_from_preemptions >= 0) j["minimized_from_preemptions"] = minimized_from_preemptions;
  return j;
}

Schedule Schedule::from_json(const json& j, const std::string& src) {
  if (!j.is_object()) throw ScheduleError(src + ": expected a JSON object");
  if (field(j, "format") != "racelab-schedule")
    bad(src, "format", "\"racelab-schedule\"", field(j, "format"));
  const json& ver = field(j, "version");
  if (ver != kScheduleVersion) bad(src, "version", std::to_string(kScheduleVersion), ver);
  only_keys(j, src, "",
            {"format", "version", "racelab_version", "scenario", "workload", "knobs", "mitigation", "threads",
             "strategy", "seed", "decisions", "events", "outcome", "preemptions", "minimized_from_preemptions"});
  Schedule s;
  s.racelab_version = field(j, "racelab_version").is_string() ? j["racelab_version"].get<std::string>() : "";
  s.scenario = field(j, "scenario").is_string() ? j["scenario"].get<std::string>() : "";
  s.workload = req_string(j, src, "workload");
  if (s.workload.empty()) bad(src, "workload", "a workload name", j["workload"]);
  s.mitigation = req_string(j, src, "mitigation");
  s.strategy = field(j, "strategy").is_string() ? j["strategy"].get<std::string>() : "";
  const json& knobs = field(j, "knobs");
  if (!knobs.is_object()) bad(src, "knobs", "an object", knobs);
  s.knobs = knobs;
  s.threads = req_threads(field(j, "threads"), src);
  const json& seed = field(j, "seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
    bad(src, "seed", "an unsigned integer", seed);
  s.seed = seed.get<uint64_t>();
  const json& ds = field(j, "decisions");
  if (!ds.is_array()) bad(src, "decisions", "an array", ds);
  if (ds.size() > kMaxDecisions)
    throw ScheduleError(fmt::format("{}: field 'decisions': {} of them, expected at most {} (no trial takes more steps)",
                                    src, ds.size(), kMaxDecisions));
  for (size_t i = 0; i < ds.size(); ++i) {
    const json& d = ds[i];
    std::string at = fmt::format("decisions[{}]", i);
    if (!d.is_object()) bad(src, at, "an object", d);
    only_keys(d, src, at, {"step", "thread", "point", "preemption", "object", "access", "let_go"});
    Decision x;
    x.step = req_int(d, src, "step", 0, at + ".step");
    if (x.step != static_cast<int64_t>(i)) bad(src, at + ".step", std::to_string(i), d["step"]);
    x.thread = static_cast<int>(req_bounded(d, src, "thread", kMaxThreadId, at + ".thread", "a thread id"));
    x.point = field(d, "point").is_string() ? d["point"].get<std::string>() : "";
    if (!field(d, "point").is_null() && !field(d, "point").is_string())
      bad(src, at + ".point", "a string", d["point"]);
    const json& pre = field(d, "preemption");
    if (!pre.is_null() && !pre.is_boolean()) bad(src, at + ".preemption", "true or false", pre);
    x.preemption = pre.is_boolean() && pre.get<bool>();
    if (!field(d, "object").is_null()) {
      x.object = static_cast<int>(req_bounded(d, src, "object", INT_MAX, at + ".object", "an object number"));
      const json& acc = field(d, "access");
      if (!acc.is_string() || (acc.get<std::string>() != "read" && acc.get<std::string>() != "write"))
        bad(src, at + ".access", "\"read\" or \"write\"", acc);
      x.write = acc.get<std::string>() == "write";
    } else if (!field(d, "access").is_null()) {
      bad(src, at + ".object", "an object number (access needs one)", field(d, "object"));
    }
    const json& lg = field(d, "let_go");
    if (!lg.is_null() && !lg.is_boolean()) bad(src, at + ".let_go", "true or false", lg);
    x.let_go = lg.is_boolean() && lg.get<bool>();
    s.decisions.push_back(std::move(x));
  }
  const json& es = field(j, "events");
  if (!es.is_null()) {
    if (!es.is_array()) bad(src, "events", "an array", es);
    for (size_t i = 0; i < es.size(); ++i) {
      const json& e = es[i];
      std::string at = fmt::format("events[{}]", i);
      if (!e.is_object()) bad(src, at, "an object", e);
      only_keys(e, src, at, {"step", "thread", "kind", "what"});
      Event x;
      x.step = req_bounded(e, src, "step", kMaxStep, at + ".step", "a step");
      x.thread = static_cast<int>(req_bounded(e, src, "thread", kMaxThreadId, at + ".thread", "a thread id"));
      x.kind = req_string(e, src, "kind", at + ".kind");
      x.what = field(e, "what").is_string() ? e["what"].get<std::string>() : "";
      s.events.push_back(std::move(x));
    }
  }
  const json& out = field(j, "outcome");
  if (!out.is_object()) bad(src, "outcome", "an object {\"class\":...}", out);
  only_keys(out, src, "outcome", {"class", "detail", "failing_step"});
  const json& cls = field(out, "class");
  if (!cls.is_string() || !parse_outcome(cls.get<std::string>(), &s.outcome))
    bad(src, "outcome.class", "an outcome class (holds, error, stuck_state, ...)", cls);
  s.detail = field(out, "detail").is_string() ? out["detail"].get<std::string>() : "";
  const json& fs = field(out, "failing_step");
  if (!fs.is_null() && (!fs.is_number_integer() || (fs.is_number_unsigned() && fs.get<uint64_t>() > INT64_MAX) ||
                        fs.get<int64_t>() < -1 || fs.get<int64_t>() > kMaxStep))
    bad(src, "outcome.failing_step", fmt::format("a step from 0 to {}, or -1 for none", kMaxStep), fs);
  s.failing_step = fs.is_null() ? -1 : fs.get<int64_t>();
  s.preemptions = s.count_preemptions();
  const json& mf = field(j, "minimized_from_preemptions");
  if (!mf.is_null()) s.minimized_from_preemptions = req_int(j, src, "minimized_from_preemptions", 0);
  return s;
}

Schedule Schedule::from_trial(const TrialSpec& spec, const TrialResult& r) {
  Schedule s;
  s.racelab_version = RACELAB_VERSION;
  s.scenario = spec.scenario;
  s.workload = spec.workload;
  s.mitigation = spec.mitigation;
  s.knobs = spec.knobs.is_object() ? spec.knobs : json::object();
  s.threads = spec.threads;
  s.seed = spec.seed;
  s.strategy = spec.strategy_name;
  s.decisions = r.decisions;
  s.events = r.events;
  s.outcome = r.outcome;
  s.detail = r.detail;
  s.failing_step = r.failing_step;
  s.preemptions = s.count_preemptions();
  return s;
}

int64_t Schedule::count_preemptions() const {
  int64_t n = 0;
  for (const auto& d : decisions) n += d.preemption ? 1 : 0;
  return n;
}

TrialSpec Schedule::replay_spec() const {
  TrialSpec t;
  t.scenario = scenario;
  t.workload = workload;
  t.mitigation = mitigation;
  t.knobs = knobs;
  t.threads = threads;
  t.seed = seed;
  t.strategy_name = "replay";
  json ds = json::array();
  for (const auto& d : decisions) {
    json x = {{"thread", d.thread}};
    if (points_known) x["point"] = d.point;
    if (d.let_go) x["let_go"] = true;
    ds.push_back(std::move(x));
  }
  t.strategy = {{"kind", "replay"}, {"decisions", std::move(ds)}};
  return t;
}

// A failing trial's detail quotes the program's output, any bytes: invalid UTF-8 is replaced, not thrown.
void save_schedule(const Schedule& s, const std::string& path) {
  write_file_atomically(path, s.to_json().dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

Schedule parse_schedule(const std::string& text, const std::string& source) {
  ParsedJson parsed;
  try {
    parsed = parse_json_finding_duplicates(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999999
    throw ScheduleError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  // The last of two keys would win in silence (engine/unique_keys.h): refused, as in scenario files.
  if (!parsed.duplicates.empty()) {
    const DuplicateKey& d = parsed.duplicates.front();
    // Named as the other fields are ("decisions[0].thread", not "$.decisions[0].thread").
    const std::string field = d.path.rfind("$.", 0) == 0 ? d.path.substr(2) : d.path;
    throw ScheduleError(fmt::format("{}: field '{}': {}; expected {}", source, field, describe(d), kEachKeyOnce));
  }
  return Schedule::from_json(parsed.doc, source);
}

Schedule load_schedule(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ScheduleError(fmt::format("{}: is a directory, expected a schedule file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScheduleError(fmt::format("{}: cannot open schedule file", path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw ScheduleError(fmt::format("{}: cannot read schedule file", path));
  return parse_schedule(text, path);
}

std::string to_compact(const Schedule& s) {
  json a = json::array({1, s.workload, s.mitigation, s.threads, s.seed, outcome_name(s.outcome), s.knobs,
                        s.scenario, rle_encode(s.decisions)});
  return std::string(kCompactPrefix) + b64_encode(a.dump(-1, ' ', false, json::error_handler_t::replace));
}

Schedule from_compact(const std::string& text_in) {
  std::string text = text_in;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  const std::string src = "compact form";
  if (text.rfind(kCompactPrefix, 0) != 0)
    throw ScheduleError(fmt::format("{}: expected it to start with '{}'", src, kCompactPrefix));
  std::string raw;
  if (!b64_decode(text.substr(std::strlen(kCompactPrefix)), &raw))
    throw ScheduleError(src + ": not base64url text after the prefix (truncated or mangled log line?)");
  json a = json::parse(raw, nullptr, false);
  if (a.is_discarded() || !a.is_array() || a.size() != 9)
    throw ScheduleError(src + ": payload is not the 9-field array (truncated or mangled log line?)");
  if (a[0] != 1) bad(src, "version", "1", a[0]);
  Schedule s;
  s.racelab_version = "";
  if (!a[1].is_string() || a[1].get<std::string>().empty()) bad(src, "workload", "a workload name", a[1]);
  s.workload = a[1].get<std::string>();
  if (!a[2].is_string()) bad(src, "mitigation", "a string", a[2]);
  s.mitigation = a[2].get<std::string>();
  s.threads = req_threads(a[3], src);
  if (!a[4].is_number_unsigned() && !(a[4].is_number_integer() && a[4].get<int64_t>() >= 0))
    bad(src, "seed", "an unsigned integer", a[4]);
  s.seed = a[4].get<uint64_t>();
  if (!a[5].is_string() || !parse_outcome(a[5].get<std::string>(), &s.outcome))
    bad(src, "outcome", "an outcome class", a[5]);
  if (!a[6].is_object()) bad(src, "knobs", "an object", a[6]);
  s.knobs = a[6];
  if (!a[7].is_string()) bad(src, "scenario", "a string", a[7]);
  s.scenario = a[7].get<std::string>();
  if (!a[8].is_string()) bad(src, "decisions", "run-length text", a[8]);
  std::vector<int> threads = a[8].get<std::string>().empty() ? std::vector<int>{} : rle_decode(a[8].get<std::string>());
  for (size_t i = 0; i < threads.size(); ++i) {
    Decision d;
    d.step = static_cast<int64_t>(i);
    d.thread = threads[i];
    s.decisions.push_back(d);
  }
  s.points_known = false;
  s.strategy = "replay";
  return s;
}

Schedule load_schedule_arg(const std::string& arg) {
  if (arg.rfind(kCompactPrefix, 0) == 0) return from_compact(arg);
  return load_schedule(arg);
}

}  // namespace racelab
