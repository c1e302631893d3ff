// cli/campaign_command.cpp -- see campaign_command.h. Binds the engine's
// run_cell, the compile layer's mitigation list and LibTorch version, and the
// renderers (reports/) to the campaign's run loop (campaign/).
#include "cli/campaign_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "campaign/campaign.h"
#include "campaign/catalogue.h"
#include "campaign/local_shards.h"
#include "campaign/minimize_timelines.h"
#include "campaign/shard_env.h"
#include "cli/backend_selection.h"
#include "cli/cell_flags.h"
#include "cli/flags.h"
#include "compile/mitigation/mitigation.h"
#include "compile/torch_compat.h"
#include "engine/cell.h"
#include "engine/exec_host.h"
#include "engine/supervisor.h"
#include "racelab/exit_code.h"
#include "reports/beside_model.h"
#include "reports/live_report.h"

namespace fs = std::filesystem;

namespace racelab::cli {

using namespace racelab::campaign;
using namespace racelab::reports;
using nlohmann::json;

namespace {

struct RunFlags {
  std::vector<std::string> paths;
  std::string out;
  std::string junit;
  std::string shard_text;
  std::string claim_file;  // a local shard: claim cells from this shared list (campaign/cell_claims.h)
  double budget_scale = 1.0;
  int jobs = 0;
  bool no_progress = false;
  bool no_minimize = false;
  std::string torch;  // --torch: the torch version whose knobs and expectations apply
};

void add_run_flags(CLI::App& app, RunFlags& f, const std::string& default_out) {
  f.out = default_out;
  app.add_option("--out", f.out, "Report directory (results.jsonl, report.{json,md,html}, schedules/, traces/)")
      ->capture_default_str();
  app.add_option("--budget-scale", f.budget_scale, "Multiply every trial and time budget (0.1 = CI-sized)")
      ->check(positive_seconds().description("SCALE>0"))
      ->capture_default_str();
  app.add_option("--shard", f.shard_text,
                 "Run only shard i of n (1-based, e.g. 2/4), or `auto`: the shard a Slurm array, a Kubernetes Indexed "
                 "Job or RACELAB_SHARD=i/n names; each cell's trials are dealt over the shards; combine with "
                 "`racelab merge`");
  app.add_option("--claim-from", f.claim_file, "(internal) a local shard claims its cells through this file")
      ->group("");
  app.add_option("--jobs,-j", f.jobs, "Run as this many parallel shards on this machine (default: one per core)")
      ->check(positive_integer());
  app.add_option("--junit", f.junit, "Also write JUnit XML here (one test case per expectation)");
  app.add_flag("--no-progress", f.no_progress, "No live progress line, even on a terminal");
  app.add_option("--torch", f.torch,
                 "Judge by this torch version's entries (knobs_by_torch, expectations_by_torch: \"2.14\"); default: "
                 "the --python's torch when a real-torch scenario runs, else none (the default entries)");
  app.add_flag("--no-minimize", f.no_minimize,
               "compare: draw failing schedules as found, without minimising them (ci never minimises)");
  add_python_option(app);
}

}  // namespace

namespace {

// The expectations that did not pass, each with its clause, its figures and
// the cells behind them -- printed last, so the tail of a CI log says what
// failed, where and by how much without opening the report.
void print_unmet_expectations(const json& report) {
  for (const auto& s : report["scenarios"])
    for (const auto& m : s["mitigations"]) {
      if (m["check"]["status"] == "pass") continue;
      for (const auto& cl : m["check"]["clauses"])
        if (cl["status"] != "pass")
          std::printf("%s %s/%s: %s -- %s\n", cl["status"] == "fail" ? "FAIL" : "INCOMPLETE",
                      s["name"].get<std::string>().c_str(), m["name"].get<std::string>().c_str(),
                      cl["clause"].get<std::string>().c_str(), cl["measured"].get<std::string>().c_str());
      // The cells behind the figures, a bounded few.
      int shown = 0, more = 0;
      for (const auto& c : s["cells"]) {
        if (c["mitigation"] != m["name"]) continue;
        if (shown == 12) {
          ++more;
          continue;
        }
        ++shown;
        const int64_t trials = c["trials"].get<int64_t>(), failures = c["failures"].get<int64_t>(), budget = c.value("max_trials", int64_t{0});
        std::string classes;
        for (auto it = c["by_outcome"].begin(); it != c["by_outcome"].end(); ++it)
          if (it.key() != "holds") classes += fmt::format("{}{} {}", classes.empty() ? "" : ", ", it.value().get<int64_t>(), it.key());
        const int64_t first = c.value("first_failure_trial", int64_t{-1});
        std::printf("    cell %s/%s, %d threads, %s, seed %llu: %lld of %lld trials failed%s%s, budget %lld trials, %s\n",
                    s["name"].get<std::string>().c_str(), m["name"].get<std::string>().c_str(),
                    c["threads"].get<int>(), c["strategy"].get<std::string>().c_str(),
                    static_cast<unsigned long long>(c["seed"].get<uint64_t>()), static_cast<long long>(failures),
                    static_cast<long long>(trials), classes.empty() ? "" : (" (" + classes + ")").c_str(),
                    first > 0 ? fmt::format(", first at trial {}", first).c_str() : "",
                    static_cast<long long>(budget), c.value("status", "").c_str());
      }
      if (more > 0) std::printf("    ... and %d more cells (report.md)\n", more);
    }
}

}  // namespace

int print_campaign(const json& report, const ReportFiles& files, const std::string& results, bool ci,
                   bool interrupted, bool strict) {
  const auto& e = report["expectations"];
  // The verdict table is the headline; print it for the terminal and CI logs.
  const std::string md = render_markdown(report);
  const auto start = md.find("## Verdicts");
  const auto end = md.find("\n## ", start + 1);
  if (start != std::string::npos) std::printf("%s\n", md.substr(start, end - start).c_str());
  std::printf("expectations: %lld passed, %lld failed, %lld incomplete (of %lld)\n",
              static_cast<long long>(e["passed"].get<int64_t>()), static_cast<long long>(e["failed"].get<int64_t>()),
              static_cast<long long>(e["incomplete"].get<int64_t>()),
              static_cast<long long>(e["total"].get<int64_t>()));
  std::printf("report: %s\n        %s\n        %s\n", files.html.c_str(), files.markdown.c_str(), files.json.c_str());
  if (!files.junit.empty()) std::printf("junit:  %s\n", files.junit.c_str());
  if (!results.empty()) std::printf("results: %s\n", results.c_str());
  std::printf("wall time: %.1f s, %lld trials\n", report["campaign"]["wall_s"].get<double>(),
              static_cast<long long>(report["campaign"]["trials"].get<int64_t>()));
  if (report["campaign"].contains("idle_share"))
    std::printf("cores idle: %.1f%% of %d cores' wall time (local shards)\n",
                100 * report["campaign"]["idle_share"].get<double>(), report["campaign"]["jobs"].get<int>());
  print_unmet_expectations(report);
  if (report.contains("beside_model"))
    for (const auto& p : report["beside_model"]["pairs"]) {
      std::printf("beside the model: %s: %s\n", p["scenario"].get<std::string>().c_str(),
                  p["summary"].get<std::string>().c_str());
      for (const auto& r : p["rows"])
        if (r["agreement"] == "disagree" || r["agreement"] == "stale")
          std::printf("  %s: model %s, torch %s (%s)\n", r["mitigation"].get<std::string>().c_str(),
                      r["model"].get<std::string>().c_str(), r["pytorch"].get<std::string>().c_str(),
                      r["agreement"] == "disagree" ? "a disagreement not listed in model.known_disagreements"
                                                   : "listed in model.known_disagreements, yet they agree");
    }
  if (interrupted) {
    std::printf("interrupted: the report above covers the trials that finished\n");
    return kExitInterrupted;
  }
  // One rule for every command that checks expectations (compare, ci,
  // merge): a failed expectation exits 1. `ci` and `merge --ci` also fail on
  // one their budgets could not decide (incomplete).
  // The model beside real torch: an unexplained disagreement fails as a
  // failed expectation does; ci also fails on an undecided pair.
  if (!beside_model_passes(report, ci && strict)) return kExitExpectationFailed;
  if (!ci) return e["failed"].get<int64_t>() == 0 ? kExitOk : kExitExpectationFailed;
  // One shard of a campaign cannot decide expectations whose cells ran
  // elsewhere: it fails only on a definite failure; `racelab merge --ci` decides the rest.
  bool one_shard = false;
  for (const auto& sh : report["campaign"]["shards"]) one_shard |= sh.size() == 2 && sh[1].get<int>() > 1;
  if (!strict && one_shard && report["campaign"]["shards"].size() == 1)
    return e["failed"].get<int64_t>() == 0 ? kExitOk : kExitExpectationFailed;
  return all_expectations_pass(report) && beside_model_passes(report, true) ? kExitOk : kExitExpectationFailed;
}

int run_catalogue(bool ci, int argc, char** argv) {
  const std::string cmd = ci ? "ci" : "compare";
  CLI::App app{ci ? "Run scenario expectations as a regression check; exit 0 only if every expectation holds "
                    "(expectations: scenarios/SCHEMA.md)"
                  : "Run the catalogue and write the mitigation comparison (JSON, Markdown, HTML; what is "
                    "compared: docs/ARCHITECTURE.md)",
               argv[0]};
  RunFlags f;
  app.add_option("scenarios", f.paths, ci ? "Scenario files or directories" : "Scenario files or directories "
                                                                              "(default: the catalogue)");
  add_run_flags(app, f, ci ? "racelab-ci" : "racelab-report");
  std::string backends;
  app.add_option("--backend", backends,
                 "model, pytorch or model,pytorch: run the model's scenarios, the real-torch ones (needs --python), "
                 "or both, each real-torch scenario beside its model twin (default: the files given, or the "
                 "model's catalogue)");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  // A local shard (campaign/local_shards.h) stops when its parent dies.
  if (!f.claim_file.empty() && !stop_with_parent()) return kExitInterrupted;
  for (int rc : {require_output(app.get_name(), "--out", f.out, Output::kFolder),
                 require_output(app.get_name(), "--junit", f.junit, Output::kFileAnyFolder)})
    if (rc != kGoOn) return rc;
  if (!backends.empty()) {
    std::string error;
    std::vector<std::string> files;
    if (!select_backends(backends, f.paths, default_catalogue(), &files, &error)) {
      std::fprintf(stderr, "racelab %s: %s\n", cmd.c_str(), error.c_str());
      return kExitUsage;
    }
    f.paths = files;
    if (f.paths.empty()) {
      std::fprintf(stderr, "racelab %s: no scenario of backend %s in the files given\n", cmd.c_str(), backends.c_str());
      return kExitBadInput;
    }
  }
  if (f.paths.empty()) {
    if (ci) {
      std::fprintf(stderr, "racelab ci: give scenario files or a directory (e.g. scenarios/)\n");
      return kExitUsage;
    }
    f.paths.push_back(default_catalogue());
  }
  Shard shard;
  if (f.shard_text == "auto") {
    // The job scheduler says which shard this is (campaign/shard_env.h).
    if (const std::string why = shard_from_environment([](const char* v) { return std::getenv(v); }, &shard);
        !why.empty()) {
      std::fprintf(stderr, "racelab %s: --shard auto: %s\n", cmd.c_str(), why.c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "racelab %s: --shard auto: shard %d of %d\n", cmd.c_str(), shard.index + 1, shard.count);
  } else if (!f.shard_text.empty() && !parse_shard(f.shard_text, &shard)) {
    std::fprintf(stderr, "racelab %s: --shard: found \"%s\", expected i/n with 1 <= i <= n (e.g. 2/4) or auto\n",
                 cmd.c_str(), f.shard_text.c_str());
    return kExitUsage;
  }
  install_interrupt_handlers();  // as early as we can: a shard is started with SIGINT blocked until here
  if (int rc = resolve_torch_version(cmd, f.paths, &f.torch); rc != kExitOk) return rc;
  int rc = kExitOk;
  auto scenarios = load_catalogue(f.paths, &rc, racelab::compile::libtorch_full_version(), true, f.torch);
  if (rc != kExitOk) return rc;

  int jobs = f.jobs > 0 ? f.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!f.shard_text.empty()) jobs = 1;
  jobs = std::min<int>(jobs, static_cast<int>(plan_cells(scenarios, {}).size()));
  CampaignOptions o;
  o.out_dir = f.out;
  o.mode = ci ? "ci" : "compare";
  o.budget_scale = f.budget_scale;
  o.shard = shard;
  o.claim_file = f.claim_file;
  // A local shard's own report is not read until it ends (the parent merges
  // the results files): rebuilding it every few seconds over a growing
  // results list only takes the core from the trials.
  if (!f.claim_file.empty()) o.report_interval_s = 1e9;
  o.libtorch = racelab::compile::libtorch_full_version();
  o.torch = f.torch;
  o.progress = !f.no_progress && ::isatty(2);
  for (const auto& name : racelab::compile::mitigation::names())
    o.mitigations.push_back({{"name", name}, {"group", racelab::compile::mitigation::group(racelab::compile::mitigation::parse(name))}});
  // The trials' workers (a shard's, or the parent's that minimises the
  // timelines) are forked from a zygote, not started by loading LibTorch
  // again each: the first, and a fresh one after every crash. Here, while
  // this process runs one thread and has run no trial.
  racelab::fork_default_workers_from_zygote();
  if (jobs > 1) {
    const auto t0 = std::chrono::steady_clock::now();
    LocalShards shards;
    shards.command = cmd;
    shards.paths = f.paths;
    shards.out = f.out;
    shards.budget_scale = f.budget_scale;
    shards.torch = f.torch;
    shards.count = jobs;
    shards.total_cells = plan_cells(scenarios, {}).size();
    shards.progress = !f.no_progress && ::isatty(2);
    std::vector<int> shard_exits;
    const auto results = run_local_shards(shards, &shard_exits);
    // A shard that stopped on bad input (a worker that cannot start, say) stops
    // the campaign the same way, in the shard's own words (its log's last line).
    for (size_t k = 0; k < shard_exits.size(); ++k) {
      if (shard_exits[k] != kExitBadInput) continue;
      std::ifstream log(fs::path(f.out) / "shards" / std::to_string(k + 1) / "log.txt");
      std::string line, last;
      while (std::getline(log, line))
        if (!line.empty()) last = line;
      std::fprintf(stderr, "%s\n", last.empty() ? fmt::format("racelab {}: shard {} stopped on bad input", cmd, k + 1).c_str()
                                                 : last.c_str());
      return kExitBadInput;
    }
    std::vector<std::string> errors;
    // Read once: the report is built again from the same records after the
    // timelines are minimised (it then finds the minimised schedules).
    ResultsData data;
    json report = read_results_files(results, &data, &errors) ? build_report(data) : json(nullptr);
    for (const auto& e : errors) std::fprintf(stderr, "racelab %s: %s\n", cmd.c_str(), e.c_str());
    // A shard's torn or missing records, by file and line (the report lists them too).
    if (!report.is_null())
      for (const auto& w : report["campaign"]["warnings"])
        std::fprintf(stderr, "racelab %s: %s\n", cmd.c_str(), w.get<std::string>().c_str());
    const bool interrupted = interrupt_requested();
    if (report.is_null()) {
      // No shard wrote a header (each was killed before it could): the report
      // says so, with nothing run, rather than there being none.
      if (!interrupted) return kExitInternal;
      CampaignOptions whole = o;
      whole.shard = Shard{};
      ResultsData empty;
      const size_t planned = plan_cells(scenarios, {}).size();
      empty.headers.push_back(campaign_header(scenarios, whole, planned, planned));
      empty.ends.push_back({{"interrupted", true}, {"wall_s", 0.0}});
      report = build_report(empty);
    }
    if (!ci && !f.no_minimize && !interrupted && minimize_timelines(report)) report = build_report(data);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report["campaign"]["wall_s"] = wall;
    // How much of the cores' time the shards left unused: start-up, and a
    // shard that ran out of cells before the others did.
    double busy = 0;
    for (const auto& s : report["scenarios"])
      for (const auto& c : s["cells"]) busy += c.value("wall_s", 0.0);
    report["campaign"]["jobs"] = jobs;
    report["campaign"]["idle_share"] = wall > 0 ? std::clamp(1.0 - busy / (jobs * wall), 0.0, 1.0) : 0.0;
    const auto files = write_reports(report, f.out, f.junit);
    return print_campaign(report, files, fmt::format("{}/shards/*/results*.jsonl", f.out), ci,
                          interrupted || report["campaign"]["interrupted"].get<bool>());
  }

  LiveReport live;
  o.report = live_report(&live, f.out, f.junit);
  CampaignOutcome out;
  try {
    out = run_campaign(scenarios, o, &racelab::run_cell);
  } catch (const ExecError& e) {
    // An exec scenario's program that validated but cannot run (it never reaches main): bad input.
    std::fprintf(stderr, "racelab %s: %s\n", cmd.c_str(), e.what());
    return kExitBadInput;
  }
  json& report = live.report;
  ReportFiles& files = live.files;
  if (!ci && !f.no_minimize && !out.interrupted && minimize_timelines(report)) {
    std::vector<std::string> errors;
    const double wall = report["campaign"]["wall_s"].get<double>();
    report = rebuild_report({out.results_path}, &errors);
    report["campaign"]["wall_s"] = wall;
    files = write_reports(report, f.out, f.junit);
  }
  const int exit_code = print_campaign(report, files, out.results_path, ci, out.interrupted);
  if (!f.claim_file.empty()) {
    // A local shard: its parent reads the results file, written and synced by
    // now, and waits for this process to end. LibTorch's teardown here (static
    // destructors) would only delay the merge. The worker is ended and reaped
    // first, so its CPU time counts in this process's children's, as before;
    // the zygote ends as its socket closes.
    racelab::default_supervisor().stop();
    std::fflush(nullptr);
    ::_exit(exit_code);
  }
  return exit_code;
}

}  // namespace racelab::cli
