#include <map>
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
}  // namespace

void register_workload(Workload workload) {
  auto name = workload.name;
  if (!workload_map().emplace(name, std::move(workload)).second)
    throw std::logic_error("racelab: workload registered twice: " + name);
}
const Workload* find_workload(const std::string& name) {
  auto it = workload_map().find(name);
  return it == workload_map().end() ? nullptr : &it->second;
}
std::vector<const Workload*> all_workloads() {
  std::vector<const Workload*> out;
  for (auto& [name, w] : workload_map()) out.push_back(&w);
  return out;
}

}  // namespace racelab
