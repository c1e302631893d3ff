// reports/expectation_check.h -- one scenario expectation against the cells it
// covers: every clause (reproduces_within, holds_over, outcome/allowed,
// max_rate) with its status and what was measured (scenarios/SCHEMA.md).
#ifndef RACELAB_REPORTS_EXPECTATION_CHECK_H_
#define RACELAB_REPORTS_EXPECTATION_CHECK_H_

#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/matrix.h"
#include "campaign/scenario.h"
#include "reports/cell_stats.h"

namespace racelab::reports {

// {"status": pass|fail|incomplete, "expectation", "describe", "why", "clauses",
//  "cells", "trials", "failures"}. `scale` is the campaign's budget scale
// (holds_over counts scale with it).
nlohmann::json check_expectation(const campaign::Scenario& s, const campaign::Expectation& e,
                                 const std::vector<campaign::PlannedCell>& plan,
                                 const std::map<CellKey, CellStats>& stats, double scale);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_EXPECTATION_CHECK_H_
