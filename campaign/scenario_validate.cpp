// campaign/scenario_validate.cpp -- validate_scenario() (scenario.h):
// every problem of a scenario document at once, each with its JSON path, what
// was found and what was expected (scenarios/SCHEMA.md).
#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/driver.h"
#include "engine/outcome.h"
#include "racelab/workload.h"
#include "campaign/scenario.h"
#include "campaign/scenario_exec.h"

namespace racelab::campaign {
namespace {

using nlohmann::json;

// The strategies a scenario may sweep: the engine's syntax (engine/driver.h),
// except replay -- a catalogue must not depend on schedule files elsewhere.
bool catalogue_strategy(const std::string& s) {
  try {
    return parse_strategy(s).kind != StrategyName::Kind::kReplay;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// Short rendering of what was found, so messages stay one line.
std::string show(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "a value";
  }
}

// Collects problems for one document; each check names the JSON path.
class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}
  std::vector<Problem> problems;

  void add(const std::string& path, const std::string& found, const std::string& expected) {
    problems.push_back({file_, path, found, expected});
  }
  void only_keys(const json& obj, const std::string& path, const std::set<std::string>& keys) {
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (!keys.count(it.key()))
        add(path + "." + it.key(), "unknown key \"" + it.key() + "\"",
            fmt::format("one of {}", fmt::join(keys, ", ")));
  }
  const json* require(const json& obj, const std::string& path, const char* key) {
    if (!obj.contains(key)) {
      add(path + "." + key, "nothing", "this required key");
      return nullptr;
    }
    return &obj.at(key);
  }
  bool string(const json& v, const std::string& path, bool nonempty = true) {
    if (!v.is_string()) return add(path, type_name(v), "a string"), false;
    if (nonempty && v.get<std::string>().empty()) return add(path, "\"\"", "a non-empty string"), false;
    return true;
  }
  // A count of trials: 1 .. kMaxScenarioTrials.
  bool trial_count(const json& v, const std::string& path) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxScenarioTrials ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(kMaxScenarioTrials)))
      return add(path, show(v), fmt::format("an integer from 1 to {} (a count of trials)", kMaxScenarioTrials)), false;
    return true;
  }
  // A time: 0 (or, with positive, more) .. kMaxScenarioSeconds.
  bool seconds(const json& v, const std::string& path, bool positive) {
    if (!v.is_number() || (positive ? v.get<double>() <= 0 : v.get<double>() < 0) ||
        !(v.get<double>() <= kMaxScenarioSeconds))
      return add(path, show(v),
                 fmt::format("a number of seconds {} and at most {} (one week)", positive ? "> 0" : ">= 0",
                             static_cast<int64_t>(kMaxScenarioSeconds))),
             false;
    return true;
  }
  bool failure_class(const json& v, const std::string& path) {
    Outcome o;
    if (!v.is_string() || !parse_outcome(v.get<std::string>(), &o) || !is_failure(o))
      return add(path, show(v), "a failure class: " + failure_class_list()), false;
    return true;
  }
  // A non-empty array of ints in [1, 64], no duplicates.
  bool thread_list(const json& v, const std::string& path) {
    if (!v.is_array() || v.empty()) return add(path, show(v), "a non-empty array of thread counts"), false;
    std::set<int64_t> seen;
    bool ok = true;
    for (size_t i = 0; i < v.size(); ++i) {
      const auto p = fmt::format("{}[{}]", path, i);
      if (!v[i].is_number_integer() || v[i].get<int64_t>() < 1 || v[i].get<int64_t>() > 64)
        add(p, show(v[i]), "a thread count from 1 to 64"), ok = false;
      else if (!seen.insert(v[i].get<int64_t>()).second)
        add(p, show(v[i]), "no duplicate thread counts"), ok = false;
    }
    return ok;
  }

 private:
  std::string file_;
};

const std::set<std::string> kTopKeys = {"format",     "version",     "name",         "race",       "description",
                                        "workload",   "knobs",       "threads",      "seeds",      "strategies",
                                        "mitigations", "expectations", "cost",        "supervised", "trial_timeout_s",
                                        "expectations_by_libtorch", "expectations_by_torch", "knobs_by_torch",
                                        "exec", "pyrun", "model"};
const std::set<std::string> kStrategyKeys = {"strategy", "trials", "seconds", "threads"};
const std::set<std::string> kExpectationKeys = {"reproduces_within", "holds_over", "outcome", "allowed", "max_rate",
                                                "holds",             "strategies", "threads", "why"};
const std::set<std::string> kCostKeys = {"metric", "ideal", "strategy"};
const std::set<std::string> kModelKeys = {"scenario", "known_disagreements"};

void validate_expectation(Checker& c, const json& e, const std::string& path, const json& doc) {
  if (!e.is_object()) return c.add(path, type_name(e), "an expectation object");
  c.only_keys(e, path, kExpectationKeys);
  int clauses = 0;
  if (e.contains("reproduces_within")) ++clauses, c.trial_count(e["reproduces_within"], path + ".reproduces_within");
  if (e.contains("holds_over")) ++clauses, c.trial_count(e["holds_over"], path + ".holds_over");
  if (e.contains("outcome")) ++clauses, c.failure_class(e["outcome"], path + ".outcome");
  if (e.contains("max_rate")) {
    ++clauses;
    const auto& r = e["max_rate"];
    if (!r.is_number() || r.get<double>() < 0 || r.get<double>() > 1)
      c.add(path + ".max_rate", show(r), "a failure rate from 0 to 1");
  }
  if (e.contains("allowed")) {
    ++clauses;
    const auto& a = e["allowed"];
    if (!a.is_array() || a.empty())
      c.add(path + ".allowed", show(a), "a non-empty array of failure classes");
    else
      for (size_t i = 0; i < a.size(); ++i) c.failure_class(a[i], fmt::format("{}.allowed[{}]", path, i));
  }
  if (e.contains("holds")) {
    ++clauses;
    const auto& h = e["holds"];
    const json* p = h.is_object() && h.contains("exhaustive_preemptions") ? &h["exhaustive_preemptions"] : nullptr;
    if (!h.is_object() || h.size() != 1 || p == nullptr) {
      c.add(path + ".holds", show(h), "{\"exhaustive_preemptions\": P}");
    } else if (!p->is_number_integer() || p->get<int64_t>() < 0 || p->get<int64_t>() > 8) {
      c.add(path + ".holds.exhaustive_preemptions", show(*p), "an integer from 0 to 8 (dfs:P's or dpor:P's bound)");
    } else {
      // The proof needs a dfs or dpor cell with at least that bound among the matched strategies.
      const int64_t want = p->get<int64_t>();
      bool found = false;
      std::set<std::string> allowed_strategies;
      if (e.contains("strategies") && e["strategies"].is_array())
        for (const auto& s : e["strategies"])
          if (s.is_string()) allowed_strategies.insert(s.get<std::string>());
      if (doc.contains("strategies") && doc["strategies"].is_array())
        for (const auto& st : doc["strategies"]) {
          if (!st.is_object() || !st.contains("strategy") || !st["strategy"].is_string()) continue;
          const std::string name = st["strategy"].get<std::string>();
          if (!allowed_strategies.empty() && !allowed_strategies.count(name)) continue;
          try {
            const StrategyName sn = parse_strategy(name);
            found |= sn.exhaustive() && sn.param >= want;
          } catch (const std::invalid_argument&) {
          }
        }
      if (!found)
        c.add(path + ".holds.exhaustive_preemptions", std::to_string(want),
              fmt::format("a bound some matched strategy searches: sweep dfs:P or dpor:P with P >= {}", want));
    }
  }
  if (clauses == 0)
    c.add(path, "no clause", "at least one of reproduces_within, holds_over, holds, outcome, allowed, max_rate");
  if (e.contains("holds") && (e.contains("reproduces_within") || e.contains("outcome") || e.contains("allowed")))
    c.add(path + ".holds", "holds together with reproduces_within/outcome/allowed",
          "either a holding or a failing expectation, not both");
  if (e.contains("holds_over") && (e.contains("reproduces_within") || e.contains("outcome") || e.contains("allowed")))
    c.add(path + ".holds_over", "holds_over together with reproduces_within/outcome",
          "either a holding or a failing expectation, not both (holds_over allows no failure class)");
  if (e.contains("why")) c.string(e["why"], path + ".why");
  if (e.contains("strategies")) {
    const auto& s = e["strategies"];
    std::set<std::string> swept;
    if (doc.contains("strategies") && doc["strategies"].is_array())
      for (const auto& st : doc["strategies"])
        if (st.is_object() && st.contains("strategy") && st["strategy"].is_string())
          swept.insert(st["strategy"].get<std::string>());
    if (!s.is_array() || s.empty())
      c.add(path + ".strategies", show(s), "a non-empty array of strategies from $.strategies");
    else
      for (size_t i = 0; i < s.size(); ++i)
        if (!s[i].is_string() || !swept.count(s[i].get<std::string>()))
          c.add(fmt::format("{}.strategies[{}]", path, i), show(s[i]),
                fmt::format("a strategy the scenario sweeps ({})", fmt::join(swept, ", ")));
  }
  if (e.contains("threads") && c.thread_list(e["threads"], path + ".threads") && doc.contains("threads") &&
      doc["threads"].is_array()) {
    for (size_t i = 0; i < e["threads"].size(); ++i) {
      bool swept = false;
      for (const auto& t : doc["threads"]) swept |= (t == e["threads"][i]);
      if (!swept)
        c.add(fmt::format("{}.threads[{}]", path, i), show(e["threads"][i]), "a thread count from $.threads");
    }
  }
}

// Trials the expectation's matched cells get at full budget, to reject an
// expectation the budgets can never satisfy (holds_over 500 with 100 trials).
int64_t matched_budget(const json& doc, const json& e) {
  int64_t total = 0;
  const auto seeds = doc.contains("seeds") && doc["seeds"].is_array() ? doc["seeds"].size() : 1;
  for (const auto& st : doc["strategies"]) {
    if (!st.is_object() || !st.contains("strategy") || !st.contains("trials")) continue;
    if (!st["trials"].is_number_integer() || !st["strategy"].is_string()) continue;
    const auto name = st["strategy"].get<std::string>();
    if (e.contains("strategies") && e["strategies"].is_array() &&
        std::find(e["strategies"].begin(), e["strategies"].end(), json(name)) == e["strategies"].end())
      continue;
    const json& threads = st.contains("threads") ? st["threads"] : doc["threads"];
    if (!threads.is_array()) continue;
    for (const auto& t : threads) {
      if (e.contains("threads") && e["threads"].is_array() &&
          std::find(e["threads"].begin(), e["threads"].end(), t) == e["threads"].end())
        continue;
      total += st["trials"].get<int64_t>() * static_cast<int64_t>(seeds);
    }
  }
  return total;
}


// format, version, name, description, race, and no unknown top-level key.
void check_identity(Checker& c, const json& doc) {
  c.only_keys(doc, "$", kTopKeys);
  if (auto* f = c.require(doc, "$", "format"); f && *f != kScenarioFormat)
    c.add("$.format", show(*f), fmt::format("\"{}\"", kScenarioFormat));
  if (auto* v = c.require(doc, "$", "version"); v && *v != kScenarioVersion)
    c.add("$.version", show(*v), fmt::format("{} (the only version this racelab reads)", kScenarioVersion));
  if (auto* n = c.require(doc, "$", "name"); n && c.string(*n, "$.name")) {
    static const std::regex re("^[a-z0-9][a-z0-9_]*$");
    if (n->get<std::string>().size() > kMaxScenarioNameLength)
      c.add("$.name", fmt::format("a name of {} characters", n->get<std::string>().size()),
            fmt::format("at most {} characters (it names files, and a file name has at most 255 bytes)",
                        kMaxScenarioNameLength));
    else if (!std::regex_match(n->get<std::string>(), re))
      c.add("$.name", show(*n), "lower-case letters, digits and _ (it names files and test cases)");
  }
  if (auto* d = c.require(doc, "$", "description")) c.string(*d, "$.description");
  if (doc.contains("race")) c.string(doc["race"], "$.race");
}

// A torch or LibTorch version key: "2.6", "2.14".
const std::regex& major_minor() {
  static const std::regex re(R"(\d+\.\d+)");
  return re;
}

// A knobs object at `path`: every name a knob of the workload, the values the
// engine's own check accepts. `shown` (knobs_by_torch: the version's own
// entries) limits the names checked; the values are checked merged.
void check_knobs(Checker& c, const json& k, const std::string& path, const json& doc, const WorkloadInfo* info,
                 const json* shown = nullptr) {
  if (!k.is_object()) return c.add(path, type_name(k), "an object of workload knobs");
  if (!info || !info->default_knobs.is_object()) return;
  const size_t before = c.problems.size();
  const json& names_of = shown ? *shown : k;
  for (auto it = names_of.begin(); it != names_of.end(); ++it)
    if (!info->default_knobs.contains(it.key())) {
      std::vector<std::string> names;
      for (auto d = info->default_knobs.begin(); d != info->default_knobs.end(); ++d) names.push_back(d.key());
      c.add(path + "." + it.key(), "unknown knob \"" + it.key() + "\"",
            fmt::format("a knob of workload {}: {}", doc["workload"].get<std::string>(), fmt::join(names, ", ")));
    }
  // Values: the engine's own check, so what validates also runs.
  if (c.problems.size() == before && info->check_knobs) {
    try {
      info->check_knobs(k);
    } catch (const KnobError& e) {
      c.add(e.knob().empty() ? path : path + "." + e.knob(), e.found(), e.expected());
    } catch (const std::invalid_argument& e) {
      c.add(path, show(k), std::string("knobs the workload accepts (") + e.what() + ")");
    }
  }
}

// The workload (as the registry knows it, when a lookup is given) and its knobs.
const WorkloadInfo* check_workload(Checker& c, const json& doc, const WorkloadLookup& lookup) {
  const WorkloadInfo* info = nullptr;
  if (auto* w = c.require(doc, "$", "workload"); w && c.string(*w, "$.workload") && lookup) {
    info = lookup(engine_workload(w->get<std::string>()));
    if (!info) c.add("$.workload", show(*w), "a registered workload (racelab list shows them)");
  }
  if (doc.contains("knobs")) check_knobs(c, doc["knobs"], "$.knobs", doc, info);
  // Per torch version: knobs laid over $.knobs (the model's variants for that
  // torch), each set checked as a whole, as the engine will run it.
  if (doc.contains("knobs_by_torch")) {
    const auto& by = doc["knobs_by_torch"];
    if (!by.is_object()) {
      c.add("$.knobs_by_torch", type_name(by), "an object: \"major.minor\" -> knobs");
    } else {
      for (auto it = by.begin(); it != by.end(); ++it) {
        const auto p = "$.knobs_by_torch." + it.key();
        if (!std::regex_match(it.key(), major_minor()))
          c.add(p, "the key \"" + it.key() + "\"", "a torch version as major.minor, e.g. \"2.14\"");
        else if (!it->is_object() || it->empty())
          c.add(p, type_name(*it), "a non-empty object of workload knobs");
        else {
          json merged = doc.contains("knobs") && doc["knobs"].is_object() ? doc["knobs"] : json::object();
          merged.update(*it);
          check_knobs(c, merged, p, doc, info, &*it);
        }
      }
    }
  }
  return info;
}

// threads, seeds, supervised, trial_timeout_s.
void check_run_options(Checker& c, const json& doc) {
  if (auto* t = c.require(doc, "$", "threads")) c.thread_list(*t, "$.threads");
  if (doc.contains("seeds")) {
    const auto& s = doc["seeds"];
    if (!s.is_array() || s.empty())
      c.add("$.seeds", show(s), "a non-empty array of seeds (integers >= 0)");
    else {
      std::set<uint64_t> seen;
      for (size_t i = 0; i < s.size(); ++i)
        if (!s[i].is_number_unsigned() && !(s[i].is_number_integer() && s[i].get<int64_t>() >= 0))
          c.add(fmt::format("$.seeds[{}]", i), show(s[i]), "an integer >= 0");
        else if (!seen.insert(s[i].get<uint64_t>()).second)
          // A seed twice runs the same trials twice, and counts them twice towards holds_over.
          c.add(fmt::format("$.seeds[{}]", i), show(s[i]), "each seed once (a seed twice repeats its trials)");
    }
  }
  if (doc.contains("supervised") && !doc["supervised"].is_boolean())
    c.add("$.supervised", show(doc["supervised"]), "true or false");
  if (doc.contains("trial_timeout_s")) c.seconds(doc["trial_timeout_s"], "$.trial_timeout_s", /*positive=*/true);
}

// The strategies with their budgets.
void check_strategies(Checker& c, const json& doc, const WorkloadInfo* info) {
  if (auto* s = c.require(doc, "$", "strategies")) {
    if (!s->is_array() || s->empty()) {
      c.add("$.strategies", show(*s), "a non-empty array of {\"strategy\", \"trials\", \"seconds\"}");
    } else {
      std::set<std::string> seen;
      for (size_t i = 0; i < s->size(); ++i) {
        const auto p = fmt::format("$.strategies[{}]", i);
        const auto& st = (*s)[i];
        if (!st.is_object()) {
          c.add(p, type_name(st), "an object {\"strategy\", \"trials\", \"seconds\"}");
          continue;
        }
        c.only_keys(st, p, kStrategyKeys);
        if (auto* n = c.require(st, p, "strategy"); n && c.string(*n, p + ".strategy")) {
          const auto name = n->get<std::string>();
          if (!catalogue_strategy(name))
            c.add(p + ".strategy", show(*n), "os, os+jitter[:P] (0 < P <= 1), random, pct:D (1 <= D <= 10), pos, surw, dfs:P or dpor:P (0 <= P <= 8), auto");
          else if (!seen.insert(name).second)
            c.add(p + ".strategy", show(*n), "each strategy once");
          else if (info && info->needs_free_running && !is_free_running(name))
            c.add(p + ".strategy", show(*n),
                  "os or os+jitter: workload " + doc["workload"].get<std::string>() + " races only free-running");
        }
        if (auto* tr = c.require(st, p, "trials")) c.trial_count(*tr, p + ".trials");
        if (st.contains("seconds")) c.seconds(st["seconds"], p + ".seconds", /*positive=*/false);
        if (st.contains("threads") && c.thread_list(st["threads"], p + ".threads") && doc.contains("threads") &&
            doc["threads"].is_array())
          // A count the scenario does not sweep gives this strategy no cell: it would run nothing, and say so nowhere.
          for (size_t k = 0; k < st["threads"].size(); ++k)
            if (std::find(doc["threads"].begin(), doc["threads"].end(), st["threads"][k]) == doc["threads"].end())
              c.add(fmt::format("{}.threads[{}]", p, k), show(st["threads"][k]), "a thread count from $.threads");
      }
    }
  }
}

// The mitigations swept; returns the names listed (valid or not).
std::vector<std::string> check_mitigations(Checker& c, const json& doc, const WorkloadInfo* info) {
  std::vector<std::string> mitigations;
  if (auto* m = c.require(doc, "$", "mitigations")) {
    if (!m->is_array() || m->empty()) {
      c.add("$.mitigations", show(*m), "a non-empty array of mitigation names");
    } else {
      for (size_t i = 0; i < m->size(); ++i) {
        const auto p = fmt::format("$.mitigations[{}]", i);
        if (!c.string((*m)[i], p)) continue;
        const auto name = (*m)[i].get<std::string>();
        if (std::find(mitigations.begin(), mitigations.end(), name) != mitigations.end())
          c.add(p, show((*m)[i]), "each mitigation once");
        else if (doc.contains("workload") &&
                 (doc["workload"] == kExecScenarioWorkload || doc["workload"] == kPyrunScenarioWorkload)) {
          // A user's own variants of the program: any name that can name files and report anchors.
          static const std::regex re("^[a-z0-9][a-z0-9_]*$");
          if (name.size() > kMaxVariantNameLength)
            c.add(p, fmt::format("a name of {} characters", name.size()),
                  fmt::format("at most {} characters (a variant of the program: it names files)",
                              kMaxVariantNameLength));
          else if (!std::regex_match(name, re))
            c.add(p, show((*m)[i]), "lower-case letters, digits and _ (a variant of the program: it names files)");
        } else if (info && std::find(info->mitigations.begin(), info->mitigations.end(), name) == info->mitigations.end())
          c.add(p, show((*m)[i]),
                fmt::format("a mitigation of workload {}: {}", doc["workload"].get<std::string>(),
                            fmt::join(info->mitigations, ", ")));
        mitigations.push_back(name);
      }
    }
  }
  return mitigations;
}

// One expectation, well formed and satisfiable at full budget.
void check_expectation_and_budget(Checker& c, const json& e, const std::string& p, const json& doc) {
  const size_t before = c.problems.size();
  validate_expectation(c, e, p, doc);
  // Budget sanity only once the document's structure is sound.
  if (c.problems.size() == before && e.contains("holds_over") && doc.contains("strategies") &&
      doc["strategies"].is_array() && doc.contains("threads") && doc["threads"].is_array()) {
    const int64_t budget = matched_budget(doc, e);
    if (budget < e["holds_over"].get<int64_t>())
      c.add(p + ".holds_over", std::to_string(e["holds_over"].get<int64_t>()),
            fmt::format("at most {} (the trials its cells get at full budget)", budget));
  }
}

// An object mitigation -> expectation whose keys are listed mitigations.
void check_expectation_map(Checker& c, const json& e, const std::string& path, const json& doc,
                           const std::vector<std::string>& mitigations) {
  for (auto it = e.begin(); it != e.end(); ++it) {
    const auto p = path + "." + it.key();
    if (std::find(mitigations.begin(), mitigations.end(), it.key()) == mitigations.end())
      c.add(p, "an expectation for \"" + it.key() + "\"", "a mitigation listed in $.mitigations");
    else
      check_expectation_and_budget(c, it.value(), p, doc);
  }
}

// One expectation per listed mitigation; then, optionally, per LibTorch "major.minor",
// replacements for some of them.
// expectations_by_libtorch / expectations_by_torch: "major.minor" -> expectations.
void check_by_version(Checker& c, const json& doc, const std::string& key, const std::string& what,
                      const std::string& example, const std::vector<std::string>& mitigations) {
  if (!doc.contains(key)) return;
  const auto& by = doc[key];
  if (!by.is_object()) return c.add("$." + key, type_name(by), "an object: \"major.minor\" -> expectations");
  for (auto it = by.begin(); it != by.end(); ++it) {
    const auto p = "$." + key + "." + it.key();
    if (!std::regex_match(it.key(), major_minor()))
      c.add(p, "the key \"" + it.key() + "\"", "a " + what + " version as major.minor, e.g. \"" + example + "\"");
    else if (!it->is_object() || it->empty())
      c.add(p, type_name(*it), "a non-empty object: mitigation -> expectation");
    else
      check_expectation_map(c, *it, p, doc, mitigations);
  }
}

void check_expectations(Checker& c, const json& doc, const std::vector<std::string>& mitigations) {
  if (auto* e = c.require(doc, "$", "expectations")) {
    if (!e->is_object()) {
      c.add("$.expectations", type_name(*e), "an object: mitigation -> expectation");
    } else {
      for (const auto& m : mitigations)
        if (!e->contains(m)) c.add("$.expectations." + m, "nothing", "an expectation for every listed mitigation");
      check_expectation_map(c, *e, "$.expectations", doc, mitigations);
    }
  }
  check_by_version(c, doc, "expectations_by_libtorch", "LibTorch", "2.6", mitigations);
  check_by_version(c, doc, "expectations_by_torch", "torch", "2.14", mitigations);
}

// The optional cost spec.
void check_cost(Checker& c, const json& doc, const std::vector<std::string>& mitigations) {
  if (doc.contains("cost")) {
    const auto& k = doc["cost"];
    if (!k.is_object()) {
      c.add("$.cost", type_name(k), "an object {\"metric\", \"ideal\", \"strategy\"}");
    } else {
      c.only_keys(k, "$.cost", kCostKeys);
      if (k.contains("metric")) c.string(k["metric"], "$.cost.metric");
      if (k.contains("strategy") && c.string(k["strategy"], "$.cost.strategy") &&
          !catalogue_strategy(k["strategy"].get<std::string>()))
        c.add("$.cost.strategy", show(k["strategy"]), "a strategy");
      if (k.contains("ideal") && c.string(k["ideal"], "$.cost.ideal") &&
          std::find(mitigations.begin(), mitigations.end(), k["ideal"].get<std::string>()) == mitigations.end())
        c.add("$.cost.ideal", show(k["ideal"]), "a mitigation listed in $.mitigations");
    }
  }
}

// The optional model twin of a real-torch scenario: the catalogue scenario of
// the same race on the model, and the mitigations on which the two are known
// to disagree, each with its cause.
void check_model(Checker& c, const json& doc, const std::vector<std::string>& mitigations) {
  if (!doc.contains("model")) return;
  const auto& k = doc["model"];
  if (!k.is_object()) return c.add("$.model", type_name(k), "an object {\"scenario\", \"known_disagreements\"}");
  c.only_keys(k, "$.model", kModelKeys);
  static const std::regex kName("[a-z0-9_]+");
  if (auto* n = c.require(k, "$.model", "scenario"))
    if (c.string(*n, "$.model.scenario") && !std::regex_match(n->get<std::string>(), kName))
      c.add("$.model.scenario", show(*n), "the name of a model scenario ([a-z0-9_]+)");
  if (!k.contains("known_disagreements")) return;
  const auto& d = k["known_disagreements"];
  if (!d.is_object()) return c.add("$.model.known_disagreements", type_name(d), "an object: mitigation -> why");
  for (auto it = d.begin(); it != d.end(); ++it) {
    const auto p = "$.model.known_disagreements." + it.key();
    if (std::find(mitigations.begin(), mitigations.end(), it.key()) == mitigations.end())
      c.add(p, "the key \"" + it.key() + "\"", "a mitigation listed in $.mitigations");
    c.string(*it, p);
  }
}

}  // namespace

std::vector<Problem> validate_scenario(const json& doc, const std::string& file, const WorkloadLookup& lookup) {
  Checker c(file);
  if (!doc.is_object()) {
    c.add("$", type_name(doc), "a scenario object");
    return c.problems;
  }
  check_identity(c, doc);
  const WorkloadInfo* info = check_workload(c, doc, lookup);
  check_run_options(c, doc);
  check_strategies(c, doc, info);
  const std::vector<std::string> mitigations = check_mitigations(c, doc, info);
  check_exec_section(doc, file, mitigations, info,
                     [&c](const std::string& path, const std::string& found, const std::string& expected) {
                       c.add(path, found, expected);
                     });
  check_expectations(c, doc, mitigations);
  check_cost(c, doc, mitigations);
  check_model(c, doc, mitigations);
  return c.problems;
}

}  // namespace racelab::campaign
