// reports/grounds.h -- what a verdict rests on, in words and numbers. Internal
// to reports/; build_report() puts it in every mitigation's "grounds".
//
// A "holds" rests on one of
//  - exhaustive search: "exhaustive up to P preemptions, N schedules,
//    complete" (dfs:P cells that tried every schedule within the bound, for
//    every thread count they ran; with dpor:P cells "N classes in M
//    schedules": every class of equivalent schedules), or
//  - sampling: "no failure in N trials of strategies random (60), pct:3 (60),
//    auto [surw 20, pos 20, pct:3 20]", with PCT's guarantee at the measured n
//    and k: a depth-d bug is hit per trial with probability >= 1/(n*k^(d-1)),
//    so all t trials miss one with probability <= (1 - that)^t.
// A "fails" states the fewest preemptions of a failing schedule (and of its
// minimised version, when one was written): how small the interleaving is.
#ifndef RACELAB_REPORTS_GROUNDS_H_
#define RACELAB_REPORTS_GROUNDS_H_

#include <string>

#include <nlohmann/json.hpp>

namespace racelab::reports {

// `cells`: the report's cell objects of this mitigation (cells_json()).
// Returns {"kind": "exhaustive"|"sampled"|"failing"|"none", "text", ...}.
nlohmann::json verdict_grounds(const std::string& verdict, const nlohmann::json& cells);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_GROUNDS_H_
