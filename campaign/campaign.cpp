#include "campaign/campaign.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "engine/outcome.h"
#include "campaign/cell_claims.h"
#include "campaign/results_log.h"

namespace racelab::campaign {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class Progress {
 public:
  Progress(bool enabled, size_t cells) : enabled_(enabled), cells_(cells) {}
  void update(size_t cell, const CellSpec& spec, int64_t cell_trials, int64_t trials, int64_t failures,
              double elapsed, bool force = false) {
    if (!enabled_) return;
    if (!force && seconds_since(last_) < 0.1) return;
    last_ = Clock::now();
    std::fprintf(stderr, "\r\33[K[%zu/%zu cells] %s · %s · %d thr · %s · trial %lld/%lld | %lld trials, %lld failing | %.0f s",
                 cell + 1, cells_, spec.scenario.c_str(), spec.mitigation.c_str(), spec.threads, spec.strategy.c_str(),
                 static_cast<long long>(cell_trials), static_cast<long long>(spec.max_trials),
                 static_cast<long long>(trials), static_cast<long long>(failures), elapsed);
    std::fflush(stderr);
  }
  void done() {
    if (enabled_) std::fprintf(stderr, "\r\33[K"), std::fflush(stderr);
  }

 private:
  bool enabled_;
  size_t cells_;
  Clock::time_point last_ = Clock::now() - std::chrono::seconds(1);
};

}  // namespace

json campaign_header(const std::vector<Scenario>& scenarios, const CampaignOptions& options, size_t cells_in_shard,
                     size_t cells_planned) {
  json docs = json::array();
  for (const auto& s : scenarios) {
    json d = s.source;
    d["__file"] = s.file;
    docs.push_back(d);
  }
  json header = {{"format", kResultsFormat},
                 {"version", kResultsVersion},
                 {"racelab_version", RACELAB_VERSION},
                 {"libtorch", options.libtorch},
                 {"torch", options.torch},
                 {"mode", options.mode},
                 {"budget_scale", options.budget_scale},
                 {"shard", {options.shard.index + 1, options.shard.count}},
                 {"cells_in_shard", cells_in_shard},
                 {"cells_planned", cells_planned},
                 {"scenarios", docs}};
  if (!options.mitigations.empty()) header["mitigations"] = options.mitigations;
  return header;
}

std::string results_file_name(const Shard& shard) {
  if (shard.count <= 1) return "results.jsonl";
  return fmt::format("results-shard-{}-of-{}.jsonl", shard.index + 1, shard.count);
}

CampaignOutcome run_campaign(const std::vector<Scenario>& scenarios, const CampaignOptions& options,
                             const CellRunner& runner) {
  namespace fs = std::filesystem;
  const auto start = Clock::now();
  fs::create_directories(options.out_dir);
  const std::string out_dir = fs::absolute(options.out_dir).lexically_normal().string();

  PlanOptions popts;
  popts.budget_scale = options.budget_scale;
  popts.ci = options.mode == "ci";
  popts.schedule_dir = (fs::path(out_dir) / "schedules").string();
  fs::create_directories(popts.schedule_dir);
  const auto all = plan_cells(scenarios, popts);
  const bool claiming = !options.claim_file.empty();
  const auto cells = claiming ? order_by_cost(all) : select_shard(all, options.shard);
  std::unique_ptr<CellClaims> claims;
  if (claiming) claims = std::make_unique<CellClaims>(options.claim_file);

  json header = campaign_header(scenarios, options, cells.size(), all.size());
  if (claiming) header["claimed"] = true;  // cells_in_shard: the shared list it claimed from

  CampaignOutcome out;
  out.cells = claiming ? 0 : cells.size();
  out.results_path = (fs::path(out_dir) / results_file_name(options.shard)).string();
  ResultsWriter writer(out.results_path, header);
  ResultsData data;  // the same records, in memory, for incremental reports
  data.headers.push_back(header);

  auto report_now = [&](bool final_report) {
    if (options.report) options.report(data, final_report);
  };

  Progress progress(options.progress, cells.size());
  int64_t total_trials = 0, total_failures = 0;
  auto last_report = Clock::now();
  bool wrote_report = false;
  for (size_t pos = 0; !interrupt_requested(); ++pos) {
    const size_t i = claiming ? static_cast<size_t>(claims->next()) : pos;
    if (i >= cells.size()) break;
    if (claiming) ++out.cells;
    CellSpec spec = cells[i].spec;
    // One schedule folder per cell: the engine names files by scenario,
    // mitigation, strategy and trial, which repeat across thread counts and seeds.
    std::string folder =
        fmt::format("{}-{}-{}t-{}-s{}", spec.scenario, spec.mitigation, spec.threads, spec.strategy, spec.seed);
    for (char& ch : folder)
      if (ch == ':' || ch == '+') ch = '_';
    spec.schedule_dir = (fs::path(popts.schedule_dir) / folder).string();
    fs::create_directories(spec.schedule_dir);
    int64_t cell_trials = 0;
    progress.update(i, spec, 0, total_trials, total_failures, seconds_since(start), true);
    const CellRun run = run_cell_until_interrupted(runner, spec, [&](const TrialRecord& r) {
      writer.trial(r, spec.seed);
      data.trials.push_back(r);
      data.cell_seeds.push_back(spec.seed);
      ++cell_trials;
      ++total_trials;
      if (is_failure(r.outcome)) ++total_failures;
      progress.update(i, spec, cell_trials, total_trials, total_failures, seconds_since(start));
    });
    const CellSummary& summary = run.summary;
    const bool interrupted = run.interrupted;
    data.cells.push_back(writer.cell(spec, summary, interrupted));
    if (!wrote_report || seconds_since(last_report) >= options.report_interval_s) {
      report_now(false);
      wrote_report = true;
      last_report = Clock::now();
    }
  }
  progress.done();
  out.interrupted = interrupt_requested();
  const double wall = seconds_since(start);
  writer.end(out.interrupted, wall);
  data.ends.push_back({{"interrupted", out.interrupted}, {"wall_s", wall}});
  report_now(true);
  return out;
}

}  // namespace racelab::campaign
