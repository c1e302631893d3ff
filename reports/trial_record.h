// reports/trial_record.h -- where reports and campaigns get the engine's cell API.
//
// The engine (harness/engine/cell.h) owns TrialRecord, CellSpec, CellSummary and
// run_cell(). Until that header lands, reports/cell_contract.h declares exactly the
// same contract so this library and its tests build on their own; the switch is
// automatic and cell_contract.* can be deleted once the engine is in.
#ifndef RACELAB_REPORTS_TRIAL_RECORD_H_
#define RACELAB_REPORTS_TRIAL_RECORD_H_

#if __has_include("engine/cell.h")
#include "engine/cell.h"
#define RACELAB_REPORTS_HAVE_ENGINE 1
#else
#include "reports/cell_contract.h"
#define RACELAB_REPORTS_HAVE_ENGINE 0
#endif

#endif  // RACELAB_REPORTS_TRIAL_RECORD_H_
