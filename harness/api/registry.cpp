#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <string>
#include <vector>
#include <stdexcept>

#include "racelab/workload.h"

namespace racelab {
namespace {
// Function-local statics: registration runs during static initialisation of
// other translation units, so the containers must exist on first use.
std::map<std::string, Workload>& workload_map() {
  static std::map<std::string, Workload> map;
  return map;
}
WorkloadMissHook miss_hook = nullptr;
}  // namespace

void set_workload_miss_hook(WorkloadMissHook hook) { miss_hook = hook; }

KnobError::KnobError(std::string knob, std::string found, std::string expected)
    : std::invalid_argument((knob.empty() ? std::string("knobs") : "knob '" + knob + "'") + ": found " + found +
                            ", expected " + expected),
      knob_(std::move(knob)),
      found_(std::move(found)),
      expected_(std::move(expected)) {}

int64_t int_knob(const nlohmann::json& knobs, const std::string& name, int64_t lo, int64_t hi) {
  const nlohmann::json& v = knobs.at(name);
  int64_t n = 0;
  bool in_range = false;
  if (v.is_number_unsigned()) {
    in_range = v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    n = static_cast<int64_t>(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    in_range = true;
    n = v.get<int64_t>();
  }
  in_range = in_range && n >= lo && n <= hi;
  if (!in_range)
    throw KnobError(name, v.dump(), "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return n;
}

void register_workload(Workload workload) {
  auto name = workload.name;
  if (!workload_map().emplace(name, std::move(workload)).second)
    throw std::logic_error("racelab: workload registered twice: " + name);
}
const Workload* find_workload(const std::string& name) {
  auto it = workload_map().find(name);
  if (it != workload_map().end()) return &it->second;
  if (miss_hook) miss_hook(name);
  return nullptr;
}
std::vector<const Workload*> all_workloads() {
  if (miss_hook) miss_hook("");
  std::vector<const Workload*> out;
  for (auto& [name, w] : workload_map()) out.push_back(&w);
  return out;
}

}  // namespace racelab
