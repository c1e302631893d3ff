// reports/trial_record.h -- the engine's cell API, as reports and campaigns use it.
//
// The engine (harness/engine/cell.h) owns TrialRecord, CellSpec, CellSummary and
// run_cell(). Reports only read records; campaigns take the runner as a
// parameter so they can be tested without workloads.
#ifndef RACELAB_REPORTS_TRIAL_RECORD_H_
#define RACELAB_REPORTS_TRIAL_RECORD_H_

#include "engine/cell.h"

#endif  // RACELAB_REPORTS_TRIAL_RECORD_H_
