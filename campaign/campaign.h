// campaign/campaign.h -- run a matrix of cells, keep every result, report as you go.
//
//   auto out = run_campaign(scenarios, options, racelab::run_cell);
//
// The campaign plans the cells (matrix.h), keeps its shard's share, runs them
// one after another through `runner` (the engine's run_cell, or a test double)
// and
//  - appends each trial to results.jsonl and flushes it (results_log.h);
//  - hands everything read so far to `options.report` (the caller's renderer,
//    reports/report.h: this layer renders nothing) after the first cell, then
//    at most every `report_interval_s`, and at the end;
//  - on request_interrupt() (Ctrl-C, campaign/interrupt.h) stops the running
//    cell at its next trial, marks it interrupted and writes the final,
//    partial report.
#ifndef RACELAB_CAMPAIGN_CAMPAIGN_H_
#define RACELAB_CAMPAIGN_CAMPAIGN_H_

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "campaign/interrupt.h"  // request_interrupt(), TrialSink, CellRunner
#include "campaign/matrix.h"
#include "campaign/results_log.h"
#include "campaign/scenario.h"
#include "engine/cell.h"

namespace racelab::campaign {

// Renders what the campaign has so far; `final` once, at the end (after an
// interrupt too).
using ReportWriter = std::function<void(const ResultsData& so_far, bool final)>;

struct CampaignOptions {
  std::string out_dir = "racelab-report";
  std::string mode = "compare";  // "compare" or "ci" (ci: cells stop at their first failure)
  double budget_scale = 1.0;
  Shard shard;
  bool progress = false;         // a live progress line on stderr
  double report_interval_s = 2;  // minimum seconds between report rewrites
  // Every mitigation name in display order, each with its report group ("" for
  // none): [{"name": .., "group": ..}, ..]. Written into the results header so
  // a report (and a merge) needs no other input; the caller passes the compile
  // layer's list (reports may not include it). Empty: rows in scenario order.
  nlohmann::json mitigations = nlohmann::json::array();
  // Local shards (cell_claims.h): this shard claims cells from the list shared
  // through this file, the costliest first, instead of taking every n-th cell.
  std::string claim_file;
  std::string libtorch;          // "2.6.0": the LibTorch the trials run on, for the
                                 // results header, the report and the expectation set
  std::string torch;             // "2.14.1": the Python torch the campaign runs against
                                 // ("" when none): knobs_by_torch, expectations_by_torch
  ReportWriter report;           // empty: the results file only
};

struct CampaignOutcome {
  std::string results_path;
  bool interrupted = false;
  size_t cells = 0;  // cells in this shard (claiming: the cells it claimed)
};

// Results file name for a shard: results.jsonl, or results-shard-2-of-4.jsonl.
std::string results_file_name(const Shard& shard);

// The first line of this shard's results file (results_log.h): what a report
// needs to know about the campaign besides its trials.
nlohmann::json campaign_header(const std::vector<Scenario>& scenarios, const CampaignOptions& options,
                               size_t cells_in_shard, size_t cells_planned);

CampaignOutcome run_campaign(const std::vector<Scenario>& scenarios, const CampaignOptions& options,
                             const CellRunner& runner);

}  // namespace racelab::campaign

#endif  // RACELAB_CAMPAIGN_CAMPAIGN_H_
