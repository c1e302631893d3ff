// The "exec" section of a scenario over a user's own program
// (campaign/scenario_exec.h), and the scenario text around it: the
// input is a scenario file's text, parsed as `racelab validate` parses it
// (duplicate keys found with their places, engine/unique_keys.h).
// validate_scenario reports problems and never throws; a document it accepts
// plans its cells, and every cell's knobs are built without an exception.
// The seeds put the section in a whole exec scenario, so mutations start
// from the section's parser rather than from the top-level checks.
#include <cstdlib>

#include "fuzz_input.h"
#include "campaign/scenario.h"
#include "campaign/scenario_exec.h"
#include "engine/unique_keys.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = racelab::fuzz::text(data, size);
  racelab::ParsedJson parsed;
  try {
    parsed = racelab::parse_json_finding_duplicates(text);
  } catch (const nlohmann::json::exception&) {  // not JSON, or a number beyond a double
    return 0;
  }
  // A duplicate is found where nlohmann sees one: the two places differ, the later one second.
  for (const auto& d : parsed.duplicates)
    if (d.second.line < d.first.line || (d.second.line == d.first.line && d.second.column <= d.first.column))
      std::abort();
  const auto problems = racelab::campaign::validate_scenario(parsed.doc, "fuzz.json");
  if (!problems.empty()) return 0;
  const racelab::campaign::Scenario s = racelab::campaign::parse_scenario(parsed.doc, "fuzz.json");
  if (s.workload != racelab::campaign::kExecScenarioWorkload) return 0;
  for (const auto& m : s.mitigations)
    for (int t : s.threads) (void)racelab::campaign::exec_cell_knobs(s, m, t);
  return 0;
}
