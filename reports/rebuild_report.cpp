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

bool read_results_files(const std::vector<std::string>& results_files, ResultsData* data_out,
                        std::vector<std::string>* errors) {
  ResultsData& data = *data_out;
  // Each shard once: the same file, or two files of the same shard, would
  // count its trials twice.
  std::map<std::string, std::string> seen_files, seen_shards;  // key -> the file that had it
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
