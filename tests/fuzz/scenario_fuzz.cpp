// Scenario files (campaign/scenario.h): validate_scenario reports
// problems and never throws, whatever the JSON; a document it accepts parses
// without an exception. The lookup knows one workload with the knob check the
// engine would apply, so the knob paths are exercised too.
#include "fuzz_input.h"
#include "racelab/workload.h"
#include "campaign/scenario.h"

namespace {

const racelab::campaign::WorkloadInfo* lookup(const std::string& name) {
  static const racelab::campaign::WorkloadInfo toy{
      nlohmann::json{{"iterations", 3}, {"flag_scope", "global"}, {"freeze", true}},
      {"none", "global_lock", "precompile"},
      false,
      [](const nlohmann::json& knobs) {
        nlohmann::json merged = {{"iterations", 3}, {"flag_scope", "global"}, {"freeze", true}};
        for (auto it = knobs.begin(); it != knobs.end(); ++it) merged[it.key()] = it.value();
        racelab::int_knob(merged, "iterations", 1, 100);
        if (merged["flag_scope"] != "global" && merged["flag_scope"] != "thread_local")
          throw racelab::KnobError("flag_scope", merged["flag_scope"].dump(), "global | thread_local");
      }};
  return name == "toy" ? &toy : nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = racelab::fuzz::json_of(data, size);
  if (doc.is_discarded()) return 0;
  for (const auto& problems : {racelab::campaign::validate_scenario(doc, "fuzz.json"),
                               racelab::campaign::validate_scenario(doc, "fuzz.json", &lookup)}) {
    if (!problems.empty()) continue;
    const racelab::campaign::Scenario s = racelab::campaign::parse_scenario(doc, "fuzz.json");
    for (const auto& e : s.expectations) (void)e.describe();
  }
  return 0;
}
