// `racelab merge`: one report from the results files of a sharded campaign.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/campaign_command.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/exit_code.h"
#include "reports/report.h"

namespace racelab::cli {

int merge_command(int argc, char** argv) {
  CLI::App app{"Merge results files of a sharded campaign into one report", argv[0]};
  std::vector<std::string> results;
  std::string out = "racelab-report", junit;
  bool ci = false;
  app.add_option("results", results, "results*.jsonl files written by `compare/ci --shard i/n`")->required();
  app.add_option("--out", out, "Report directory")->capture_default_str();
  app.add_option("--junit", junit, "Also write JUnit XML here");
  app.add_flag("--ci", ci, "Exit 1 unless every expectation holds, incomplete ones included (as `racelab ci` does)");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  for (int rc : {require_output(app.get_name(), "--out", out, Output::kFolder),
                 require_output(app.get_name(), "--junit", junit, Output::kFileAnyFolder)})
    if (rc != kGoOn) return rc;
  std::vector<std::string> errors;
  nlohmann::json report;
  try {
    report = reports::rebuild_report(results, &errors);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "racelab merge: %s\n", e.what());
    return kExitBadInput;
  }
  for (const auto& e : errors) std::fprintf(stderr, "racelab merge: %s\n", e.c_str());
  if (!errors.empty() || report.is_null()) return kExitBadInput;
  const auto& c = report["campaign"];
  // What was skipped or missing, by file and line (the report lists them too).
  for (const auto& w : c["warnings"]) std::fprintf(stderr, "racelab merge: %s\n", w.get<std::string>().c_str());
  const bool complete = c["complete"].get<bool>();
  if (!complete)
    std::fprintf(stderr, "racelab merge: %lld of %lld cells present -- a shard is missing or was interrupted\n",
                 static_cast<long long>(c["cells_done"].get<int64_t>()),
                 static_cast<long long>(c["cells_planned"].get<int64_t>()));
  const auto files = reports::write_reports(report, out, junit);
  const int rc = print_campaign(report, files, "", ci, false, /*strict=*/true);
  // --ci judges the whole campaign: with a shard missing, what was not run
  // cannot pass, even where the shards present already decided every
  // expectation. Rerun the missing shard (its index) and merge again.
  if (ci && !complete && rc == kExitOk) {
    std::fprintf(stderr, "racelab merge: --ci: the campaign is not whole; rerun the missing or interrupted shard "
                         "and merge again\n");
    return kExitBadInput;
  }
  return rc;
}

}  // namespace racelab::cli
