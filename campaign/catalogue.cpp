#include "campaign/catalogue.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "engine/python_host.h"
#include "engine/run_trial.h"
#include "engine/self_exe.h"
#include "racelab/exit_code.h"
#include "racelab/workload.h"

#ifndef RACELAB_SOURCE_DIR
#define RACELAB_SOURCE_DIR "."
#endif

namespace racelab::campaign {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The registry as the validator sees it (cached: the lookup returns pointers).
WorkloadLookup registry_lookup() {
  static std::map<std::string, WorkloadInfo> cache;
  return [](const std::string& name) -> const WorkloadInfo* {
    auto it = cache.find(name);
    if (it != cache.end()) return &it->second;
    const Workload* w = find_workload(name);
    if (!w) return nullptr;
    auto check = [w](const json& knobs) { (void)merge_knobs(*w, knobs); };
    return &cache.emplace(name, WorkloadInfo{w->default_knobs, w->mitigations, w->needs_free_running, check})
                .first->second;
  };
}

// True when a file among `paths` (files or directories) is a scenario whose
// workload runs on real torch (host "python"); unreadable files are the loader's.
bool runs_real_torch(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& e : fs::directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
    } else {
      files.push_back(p);
    }
  }
  for (const auto& file : files) {
    std::ifstream in(file);
    const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("workload") || !doc["workload"].is_string()) continue;
    const Workload* w = find_workload(doc["workload"].get<std::string>());
    if (w != nullptr && w->host == kPythonHost) return true;
  }
  return false;
}

}  // namespace

std::string default_catalogue() {
  if (fs::is_directory("scenarios")) return "scenarios";
  std::error_code ec;
  const fs::path installed = fs::path(executable_dir()).parent_path() / "share" / "racelab" / "scenarios";
  if (fs::is_directory(installed, ec)) return installed.string();
  return std::string(RACELAB_SOURCE_DIR) + "/scenarios";
}

std::vector<Scenario> load_catalogue(const std::vector<std::string>& paths, int* rc, const std::string& libtorch,
                                     bool check_workloads, const std::string& torch) {
  std::vector<Problem> problems;
  auto scenarios =
      load_scenarios(paths, check_workloads ? registry_lookup() : WorkloadLookup(), &problems, libtorch, torch);
  for (const auto& p : problems) std::fprintf(stderr, "%s\n", p.to_string().c_str());
  if (!problems.empty()) {
    std::fprintf(stderr, "%zu problem(s); fix the scenario files above (schema: scenarios/SCHEMA.md)\n",
                 problems.size());
    *rc = kExitBadInput;
  } else if (scenarios.empty()) {
    std::fprintf(stderr, "no scenario files given\n");
    *rc = kExitBadInput;
  }
  return scenarios;
}

int check_torch_flag(const std::string& cmd, const std::string& torch) {
  static const std::regex kVersion(R"(\d+\.\d+(\.[0-9A-Za-z.+_-]*)?)");
  if (torch.empty() || std::regex_match(torch, kVersion)) return kExitOk;
  std::fprintf(stderr, "racelab %s: --torch: found \"%s\", expected a version as major.minor (e.g. 2.14)\n",
               cmd.c_str(), torch.c_str());
  return kExitUsage;
}

int resolve_torch_version(const std::string& cmd, const std::vector<std::string>& paths, std::string* torch) {
  if (!torch->empty()) return check_torch_flag(cmd, *torch);
  if (!runs_real_torch(paths) || python_command().empty()) return kExitOk;  // the trials say what is missing
  std::string why;
  *torch = probe_torch_version(python_command(), &why);
  if (torch->empty()) {
    std::fprintf(stderr, "racelab %s: %s\n", cmd.c_str(), why.c_str());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace racelab::campaign
