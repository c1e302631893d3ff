// reports/time_split.h -- where a campaign's time went, from its report.
//
//   json split = time_split(report);   // racelab bench --sections compare
//
// Per scenario: its trials, their summed trial time (each trial's wall_ms) and
// share of the total, and the time per trial, costliest first. For a trainer
// scenario (where isolate_process runs a process per drafter; the micro
// workloads model it in one process) that runs both isolate_process and
// isolate_thread: the time per trial of
// each, over the cells (threads, strategy, seed) both ran, and their ratio --
// what running every drafter in a process of its own costs per trial against
// the thread-local root fix. And, when the report has them (local shards,
// cli/campaign_command.cpp), the wall time, the number of shards and the
// share of the cores' time no cell was running; per trial, the time between
// trials (the cells' wall time less their trials'). For the compile layer's
// scenarios (their trials report compile/trial_phases.h's split): the CPU
// milliseconds per trial by phase, and how much of the trial time was the
// harness's rather than the body's.
#ifndef RACELAB_REPORTS_TIME_SPLIT_H_
#define RACELAB_REPORTS_TIME_SPLIT_H_

#include <string>

#include <nlohmann/json.hpp>

namespace racelab::reports {

// {"scenarios": [{"name", "trials", "trial_s", "share", "per_trial_ms", "between_trials_ms"?,
//                 "cpu_ms"?: {phase: ms per trial, "trial", "other"}, "body_ms"?, "harness_ms"?}],
//  "trials", "trial_s", "wall_s", "jobs"?, "idle_share"?,
//  "isolate_process_over_thread": [{"scenario", "cells", "process_ms", "thread_ms", "ratio"}]}
nlohmann::json time_split(const nlohmann::json& report);

// The same as a Markdown section (## heading, tables).
std::string time_split_markdown(const nlohmann::json& split);

}  // namespace racelab::reports

#endif  // RACELAB_REPORTS_TIME_SPLIT_H_
