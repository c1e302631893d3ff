// campaign/scenario.cpp -- scenario documents: parsing and loading
// (the validator is scenario_validate.cpp).
#include "campaign/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "engine/unique_keys.h"

namespace racelab::campaign {

using nlohmann::json;

bool Expectation::matches(const std::string& strategy, int t) const {
  if (!strategies.empty() && std::find(strategies.begin(), strategies.end(), strategy) == strategies.end())
    return false;
  if (!threads.empty() && std::find(threads.begin(), threads.end(), t) == threads.end()) return false;
  return true;
}

std::string Expectation::describe() const {
  std::vector<std::string> parts;
  if (reproduces_within > 0)
    parts.push_back(fmt::format("reproduces within {} trial{}", reproduces_within, reproduces_within == 1 ? "" : "s"));
  if (holds_over > 0) parts.push_back(fmt::format("holds over {} trials", holds_over));
  if (!outcome.empty()) parts.push_back("outcome " + outcome);
  if (!allowed.empty()) parts.push_back(fmt::format("allowed {}", fmt::join(allowed, "|")));
  if (max_rate >= 0) parts.push_back(fmt::format("rate <= {}", max_rate));
  if (exhaustive_preemptions >= 0)
    parts.push_back(fmt::format("holds exhaustively up to {} preemption{}", exhaustive_preemptions,
                                exhaustive_preemptions == 1 ? "" : "s"));
  std::string s = fmt::format("{}", fmt::join(parts, ", "));
  if (!strategies.empty()) s += fmt::format(" [strategies {}]", fmt::join(strategies, ","));
  if (!threads.empty()) s += fmt::format(" [threads {}]", fmt::join(threads, ","));
  return s;
}

const Expectation* Scenario::expectation_for(const std::string& mitigation) const {
  for (const auto& e : expectations)
    if (e.mitigation == mitigation) return &e;
  return nullptr;
}

std::string Problem::to_string() const {
  return fmt::format("{}: {}: found {}, expected {}", file, path, found, expected);
}

namespace {

Expectation parse_expectation(const std::string& mitigation, const json& e) {
  Expectation x;
  x.mitigation = mitigation;
  x.source = e;
  x.reproduces_within = e.value("reproduces_within", int64_t{-1});
  x.holds_over = e.value("holds_over", int64_t{-1});
  x.outcome = e.value("outcome", "");
  if (e.contains("allowed")) x.allowed = e["allowed"].get<std::vector<std::string>>();
  x.max_rate = e.value("max_rate", -1.0);
  if (e.contains("holds") && e["holds"].is_object())
    x.exhaustive_preemptions = e["holds"].value("exhaustive_preemptions", -1);
  if (e.contains("strategies")) x.strategies = e["strategies"].get<std::vector<std::string>>();
  if (e.contains("threads")) x.threads = e["threads"].get<std::vector<int>>();
  x.why = e.value("why", "");
  return x;
}

}  // namespace

std::string libtorch_key(const std::string& libtorch_version) {
  const auto first = libtorch_version.find('.');
  if (first == std::string::npos) return libtorch_version;
  const auto second = libtorch_version.find_first_not_of("0123456789", first + 1);
  return libtorch_version.substr(0, second);
}

Scenario parse_scenario(const json& doc, const std::string& file, const std::string& libtorch,
                        const std::string& torch) {
  Scenario s;
  s.file = file;
  s.source = doc;
  s.name = doc.at("name").get<std::string>();
  s.description = doc.at("description").get<std::string>();
  s.race = doc.value("race", s.name);
  s.workload = doc.at("workload").get<std::string>();
  s.knobs = doc.value("knobs", json::object());
  s.threads = doc.at("threads").get<std::vector<int>>();
  s.seeds = doc.contains("seeds") ? doc["seeds"].get<std::vector<uint64_t>>() : std::vector<uint64_t>{1};
  for (const auto& st : doc.at("strategies")) {
    StrategyBudget b;
    b.strategy = st.at("strategy").get<std::string>();
    b.trials = st.at("trials").get<int64_t>();
    b.seconds = st.value("seconds", 0.0);
    if (st.contains("threads")) b.threads = st["threads"].get<std::vector<int>>();
    s.strategies.push_back(b);
  }
  s.mitigations = doc.at("mitigations").get<std::vector<std::string>>();
  const json* by_version = nullptr;
  if (!libtorch.empty() && doc.contains("expectations_by_libtorch")) {
    const auto& all = doc["expectations_by_libtorch"];
    const auto it = all.find(libtorch_key(libtorch));
    if (it != all.end()) by_version = &*it;
  }
  if (by_version) s.libtorch = libtorch_key(libtorch);
  // The torch's own entries: its knobs over the scenario's, its expectations last.
  const json* by_torch = nullptr;
  if (!torch.empty()) {
    const std::string key = libtorch_key(torch);
    if (doc.contains("knobs_by_torch") && doc["knobs_by_torch"].contains(key)) {
      s.knobs.update(doc["knobs_by_torch"][key]);
      s.torch = key;
    }
    if (doc.contains("expectations_by_torch") && doc["expectations_by_torch"].contains(key)) {
      by_torch = &doc["expectations_by_torch"][key];
      s.torch = key;
    }
  }
  for (const auto& m : s.mitigations) {
    const json* e = &doc.at("expectations").at(m);
    if (by_version && by_version->contains(m)) e = &by_version->at(m);
    if (by_torch && by_torch->contains(m)) e = &by_torch->at(m);
    s.expectations.push_back(parse_expectation(m, *e));
  }
  if (doc.contains("cost")) {
    const auto& k = doc["cost"];
    s.cost.metric = k.value("metric", s.cost.metric);
    s.cost.ideal = k.value("ideal", s.cost.ideal);
    s.cost.strategy = k.value("strategy", s.cost.strategy);
  }
  s.supervised = doc.value("supervised", true);
  s.trial_timeout_s = doc.value("trial_timeout_s", 30.0);
  if (doc.contains("exec")) s.exec = doc["exec"];
  if (doc.contains("pyrun")) s.pyrun = doc["pyrun"];
  return s;
}

std::vector<Scenario> load_scenarios(const std::vector<std::string>& paths, const WorkloadLookup& lookup,
                                     std::vector<Problem>* problems, const std::string& libtorch,
                                     const std::string& torch) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p))
        if (entry.is_regular_file() && entry.path().extension() == ".json") found.push_back(entry.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) problems->push_back({p, "$", "a directory with no *.json", "scenario files"});
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  std::vector<Scenario> out;
  std::set<std::string> names;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) {
      problems->push_back({f, "$", "no readable file", "a scenario file"});
      continue;
    }
    json doc;
    try {
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ParsedJson parsed = parse_json_finding_duplicates(text);
      for (const auto& d : parsed.duplicates)
        problems->push_back({f, d.path, describe(d), kEachKeyOnce});
      if (!parsed.duplicates.empty()) continue;
      doc = std::move(parsed.doc);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999999
      problems->push_back({f, "$", std::string("invalid JSON (") + e.what() + ")", "a JSON document"});
      continue;
    }
    auto found = validate_scenario(doc, f, lookup);
    if (!found.empty()) {
      problems->insert(problems->end(), found.begin(), found.end());
      continue;
    }
    auto s = parse_scenario(doc, f, libtorch, torch);
    if (!names.insert(s.name).second) {
      problems->push_back({f, "$.name", "\"" + s.name + "\" (already used by another file)", "a unique name"});
      continue;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace racelab::campaign
