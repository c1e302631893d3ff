#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "campaign/results_log.h"
#include "reports/report.h"

namespace racelab::reports {

using namespace racelab::campaign;

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What makes shards parts of one campaign: the same scenario documents (where
// each was read from aside: two machines check out to other folders) cut into
// the same number of shards. Shards of two catalogues would give two columns
// of one name; shard 1/2 beside shard 1/3 would count a cell twice.
json campaign_identity(const json& header) {
  json scenarios = header.value("scenarios", json::array());
  if (scenarios.is_array())
    for (auto& s : scenarios)
      if (s.is_object()) s.erase("__file");
  const json shard = header.value("shard", json::array({1, 1}));
  return {{"scenarios", scenarios}, {"shards", shard.is_array() && shard.size() == 2 ? shard[1] : shard}};
}

std::string describe_campaign(const json& identity) {
  std::vector<std::string> names;
  if (identity["scenarios"].is_array())
    for (const auto& s : identity["scenarios"])
      names.push_back(s.is_object() && s.contains("name") && s["name"].is_string() ? s["name"].get<std::string>()
                                                                                   : std::string("?"));
  return fmt::format("{} shard{} of scenarios {}", identity["shards"].dump(), identity["shards"] == 1 ? "" : "s",
                     fmt::join(names, ", "));
}

}  // namespace

bool read_results_files(const std::vector<std::string>& results_files, ResultsData* data_out,
                        std::vector<std::string>* errors) {
  ResultsData& data = *data_out;
  // Each shard once: the same file, or two files of the same shard, would
  // count its trials twice.
  std::map<std::string, std::string> seen_files, seen_shards;  // key -> the file that had it
  json first_identity;                                          // the first file's campaign
  std::string first_file;
  for (const auto& f : results_files) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(f, ec).string();
    if (auto [it, fresh] = seen_files.emplace(ec ? f : key, f); !fresh) {
      errors->push_back(fmt::format("{}: given twice (as {} and {}); each shard's results may be merged once", f,
                                    it->second, f));
      continue;
    }
    try {
      const size_t before = data.headers.size();
      read_results(f, &data);
      if (data.headers.size() > before) {
        const json& h = data.headers.back();
        const json identity = campaign_identity(h);
        if (first_file.empty()) {
          first_identity = identity;
          first_file = f;
        } else if (identity != first_identity) {
          errors->push_back(fmt::format("{}: not a shard of the same campaign as {} ({}, where {} has {}); merge "
                                        "the shards of one campaign, all cut into the same number of shards",
                                        f, first_file, describe_campaign(identity), first_file,
                                        describe_campaign(first_identity)));
          continue;
        }
        // The same shard of the same campaign: same shard number, same scenarios.
        const std::string shard = h.value("shard", json::array({1, 1})).dump() + " " +
                                  std::to_string(std::hash<std::string>()(h.value("scenarios", json()).dump()));
        if (auto [it, fresh] = seen_shards.emplace(shard, f); !fresh)
          errors->push_back(fmt::format("{}: shard {} of the same campaign as {}; each shard's results may be "
                                        "merged once",
                                        f, h.value("shard", json::array({1, 1})).dump(), it->second));
      }
    } catch (const std::exception& e) {
      errors->push_back(e.what());
    }
  }
  return !data.headers.empty();
}

json rebuild_report(const std::vector<std::string>& results_files, std::vector<std::string>* errors) {
  ResultsData data;
  if (!read_results_files(results_files, &data, errors)) return nullptr;
  return build_report(data);
}

}  // namespace racelab::reports
