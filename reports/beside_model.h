// reports/beside_model.h -- the model's verdicts beside real torch's.
//
// A real-torch scenario (workload host "python") may name its model twin:
//
//   "model": {"scenario": "direct_leak",
//             "known_disagreements": {"precompile": "why the two differ"}}
//
// When a campaign ran both, the report sets, for every mitigation of the
// real-torch scenario, the model's verdict (fails / holds) beside real
// torch's, with the torch version the trials ran on and an agreement mark:
//
//   agree        the same verdict
//   explained    different verdicts, listed in known_disagreements (its why)
//   disagree     different verdicts, not listed: a finding, which fails the
//                campaign (compare, ci and merge, as a failed expectation does)
//   stale        listed in known_disagreements, yet the verdicts agree: the
//                list is out of date, which fails the campaign too
//   incomplete   a side has no data yet (fails ci, as an incomplete expectation)
//   not modelled the model does not sweep the mitigation (never fails)
//
// The comparison is of observed verdicts (any failing trial: fails), not of
// failure classes: the model and torch may fail the same way under different
// names (an error on the model, the flag left set on torch).
#ifndef RACELAB_REPORTS_BESIDE_MODEL_H_
#define RACELAB_REPORTS_BESIDE_MODEL_H_

#include <string>

#include <nlohmann/json.hpp>

namespace racelab::reports {

// The report's "beside_model" section from its "scenarios" (the report's own
// entries, with their "verdict"s) and the scenario documents as written
// (name -> document, for the "model" key and the trials' torch versions in
// `torch_by_scenario`: name -> "2.6.0"). Returns
//   {"pairs": [{"scenario", "model_scenario", "race", "torch", "rows": [{"mitigation", "model", "pytorch",
//              "agreement", "why"}], "summary"}],
//    "totals": {"total", "agree", "explained", "disagree", "stale", "incomplete", "not_modelled"}}
nlohmann::json beside_model_json(const nlohmann::json& report_scenarios, const nlohmann::json& documents,
                                 const nlohmann::json& torch_by_scenario);

// True when no pair disagrees unexplained or lists a stale disagreement (and,
// with `strict`, none is incomplete). A report without the section passes.
bool beside_model_passes(const nlohmann::json& report, bool strict);

// The section rendered: Markdown, an HTML fragment, and JUnit test suites (one
// per pair, a test case per mitigation both sides sweep). Empty without pairs.
std::string beside_model_markdown(const nlohmann::json& report);
std::string beside_model_html(const nlohmann::json& report);
std::string beside_model_junit(const nlohmann::json& report);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_BESIDE_MODEL_H_
