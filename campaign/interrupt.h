// campaign/interrupt.h -- Ctrl-C: stop between trials, keep what finished.
//
// Every command that runs trials installs these handlers before its first
// trial: compare and ci (campaign.h), run, exec, pyrun, reproduce and replay
// (cli/). The first SIGINT or SIGTERM only asks for a stop. The trial in
// flight finishes -- its worker runs in a process group of its own
// (engine/supervisor.h), so a terminal's Ctrl-C, which goes to the whole
// foreground group, does not reach it -- and no trial starts after it. The
// command then prints (compare, ci: writes) its summary of the trials so far
// and exits 130 (kExitInterrupted). A second SIGINT ends the process as SIGINT
// does, for a user who will not wait for the trial in flight.
#ifndef RACELAB_CAMPAIGN_INTERRUPT_H_
#define RACELAB_CAMPAIGN_INTERRUPT_H_

#include <functional>

#include "engine/cell.h"
#include "engine/minimize.h"

namespace racelab::campaign {

// Async-signal-safe: asks the running command to stop after the current trial.
void request_interrupt();
bool interrupt_requested();
void clear_interrupt();
// SIGINT/SIGTERM -> request_interrupt(); a second SIGINT kills as usual (the
// results file is still valid up to the last flushed trial). Then unblocks
// both: a campaign's parent starts its shards with them blocked, so that an
// early interrupt waits for these handlers (cli/campaign_command.cpp).
void install_interrupt_handlers();

// Thrown out of a trial sink or a trial runner to stop between trials.
struct Interrupted {};

using TrialSink = std::function<void(const TrialRecord&)>;
using CellRunner = std::function<CellSummary(const CellSpec&, const TrialSink&)>;

struct CellRun {
  CellSummary summary;       // the runner's, or, when interrupted, one rebuilt from the trials that ended
  bool interrupted = false;  // stopped by an interrupt before its budget, search or first failure ended it
};

// runner(spec, sink) -- the engine's run_cell, or a test double -- stopped at
// the first trial to end after an interrupt; every trial that ended went to
// `sink` first.
CellRun run_cell_until_interrupted(const CellRunner& runner, const CellSpec& spec, const TrialSink& sink);

// Counts one finished trial, in trial order, into a summary rebuilt from the
// records (a cell stopped part-way; the parts of `-j N`, cli/cell_parts.h).
void count_trial(const TrialRecord& r, CellSummary* summary);

// `run`, refusing to start a trial after an interrupt (throws Interrupted):
// for what runs trials outside a cell (replay's loop, the minimiser).
TrialRunner stop_on_interrupt(TrialRunner run);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_INTERRUPT_H_
