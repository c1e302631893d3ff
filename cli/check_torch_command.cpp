// `racelab check-torch [--python CMD]`: which of the catalogue's races the
// user's own torch has, and which mitigations hold there.
//
// It runs the real-torch catalogue (scenarios/pytorch/) briefly on that
// Python's torch -- as `racelab ci` would, each cell stopping at its first
// failure, at a small budget (--budget-scale, default 0.2: a minute or two on
// 2 cores) -- and prints, per mechanism: present (a trial with no mitigation
// failed) or absent (none did), the evidence (trials, failures, classes), and
// the mitigations with no failing trial. The verdicts are measured, never
// read from the scenarios' expectations: the point is to learn what this torch
// does. It writes check-torch.md and check-torch.json (beside the campaign's
// report) into --out.
//
// Exit codes: 0 when it ran (whatever it found), 3 when the Python cannot
// import torch (the message names the command), 2 for bad flags, 130 when
// interrupted.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "campaign/campaign.h"
#include "campaign/catalogue.h"
#include "cli/campaign_command.h"
#include "reports/live_report.h"
#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "compile/torch_compat.h"
#include "engine/cell.h"
#include "engine/python_host.h"
#include "racelab/atomic_file.h"
#include "racelab/exit_code.h"

namespace racelab::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Per scenario of the report: the mechanism's verdict on this torch.
json summarise(const json& report) {
  json rows = json::array();
  for (const auto& s : report["scenarios"]) {
    std::map<std::string, json> by_mitigation;  // trials, failures, classes
    for (const auto& c : s["cells"]) {
      json& m = by_mitigation[c["mitigation"].get<std::string>()];
      if (m.is_null()) m = {{"trials", 0}, {"failures", 0}, {"classes", json::object()}};
      m["trials"] = m["trials"].get<int64_t>() + c["trials"].get<int64_t>();
      m["failures"] = m["failures"].get<int64_t>() + c["failures"].get<int64_t>();
      for (auto it = c["by_outcome"].begin(); it != c["by_outcome"].end(); ++it)
        if (it.key() != "holds" && it.key() != "infrastructure")
          m["classes"][it.key()] = m["classes"].value(it.key(), int64_t{0}) + it.value().get<int64_t>();
    }
    json holds = json::array(), fails = json::array();
    for (const auto& m : s["mitigations"]) {
      const std::string name = m["name"].get<std::string>();
      if (name == "none") continue;
      const auto it = by_mitigation.find(name);
      if (it == by_mitigation.end() || it->second["trials"].get<int64_t>() == 0) continue;
      (it->second["failures"].get<int64_t>() == 0 ? holds : fails).push_back(name);
    }
    const json none = by_mitigation.count("none") ? by_mitigation["none"] : json(nullptr);
    std::string verdict = "not run";
    if (!none.is_null() && none["trials"].get<int64_t>() > 0)
      verdict = none["failures"].get<int64_t>() > 0 ? "present" : "absent";
    rows.push_back({{"scenario", s["name"]},
                    {"mechanism", s["race"]},
                    {"verdict", verdict},
                    {"evidence", none},
                    {"mitigations_that_hold", holds},
                    {"mitigations_that_fail", fails},
                    {"by_mitigation", by_mitigation}});
  }
  return rows;
}

std::string evidence_text(const json& e) {
  if (e.is_null()) return "no trial";
  std::string classes;
  for (auto it = e["classes"].begin(); it != e["classes"].end(); ++it)
    classes += fmt::format("{}{} {}", classes.empty() ? "" : ", ", it.value().get<int64_t>(), it.key());
  return fmt::format("{} of {} trials failed{}", e["failures"].get<int64_t>(), e["trials"].get<int64_t>(),
                     classes.empty() ? "" : " (" + classes + ")");
}

std::string markdown(const json& doc) {
  std::string md = fmt::format("# racelab check-torch: torch {}\n\n", doc["torch"].get<std::string>());
  md += fmt::format("Python: `{}` · racelab {} · budget scale {} · {} trials in {:.0f} s\n\n",
                    doc["python"].get<std::string>(), RACELAB_VERSION, doc["budget_scale"].get<double>(),
                    doc["trials"].get<int64_t>(), doc["wall_s"].get<double>());
  md += "| mechanism | on this torch | evidence (no mitigation) | mitigations that hold here |\n|---|---|---|---|\n";
  for (const auto& r : doc["mechanisms"]) {
    // Each with its trials: a hold over 2 trials is a sample, over 20 better evidence.
    std::string holds;
    for (const auto& h : r["mitigations_that_hold"])
      holds += fmt::format("{}{} (0/{})", holds.empty() ? "" : ", ", h.get<std::string>(),
                           r["by_mitigation"][h.get<std::string>()]["trials"].get<int64_t>());
    md += fmt::format("| {} (`{}`) | **{}** | {} | {} |\n", r["mechanism"].get<std::string>(),
                      r["scenario"].get<std::string>(), r["verdict"].get<std::string>(),
                      evidence_text(r["evidence"]), holds.empty() ? "(none)" : holds);
  }
  md += "\nPresent: a trial with no mitigation failed on this torch. Absent: none of its trials failed -- a "
        "sample, not a proof; raise --budget-scale for more. A mitigation holds here when none of its trials "
        "failed.\n";
  return md;
}

}  // namespace

int check_torch_command(int argc, char** argv) {
  CLI::App app{"Which of the catalogue's races your torch has: runs the real-torch catalogue briefly on the "
               "--python's torch and prints, per mechanism, present or absent, the evidence and the mitigations "
               "that hold there (Markdown and JSON in --out). Exit 0 when it ran, 3 when the Python cannot "
               "import torch",
               argv[0]};
  std::string out = "racelab-check-torch", scenarios;
  double scale = 0.2;
  bool no_progress = false;
  app.add_option("--out", out, "Folder for check-torch.{md,json} and the campaign's report")->capture_default_str();
  app.add_option("--budget-scale", scale, "Multiply every trial budget of the real-torch catalogue")
      ->check(positive_seconds().description("SCALE>0"))
      ->capture_default_str();
  app.add_option("--scenarios", scenarios, "The real-torch scenarios to run (default: the catalogue's pytorch/)");
  app.add_flag("--no-progress", no_progress, "No live progress line, even on a terminal");
  add_python_option(app);
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  if (int rc = require_output(app.get_name(), "--out", out, Output::kFolder); rc != kGoOn) return rc;
  if (python_command().empty()) set_python_command("python3");  // no --python, no $RACELAB_PYTHON
  const std::string python = python_command();
  std::string why;
  const std::string torch = probe_torch_version(python, &why);
  if (torch.empty()) {
    std::fprintf(stderr, "racelab check-torch: %s; give --python CMD, a command that starts a Python with torch\n",
                 why.c_str());
    return kExitBadInput;
  }
  if (scenarios.empty()) scenarios = (fs::path(campaign::default_catalogue()) / "pytorch").string();
  std::printf("racelab check-torch: torch %s (%s), the scenarios in %s\n", torch.c_str(), python.c_str(),
              scenarios.c_str());
  std::fflush(stdout);
  campaign::install_interrupt_handlers();
  int rc = kExitOk;
  auto catalogue =
      campaign::load_catalogue({scenarios}, &rc, racelab::compile::libtorch_full_version(), true, torch);
  if (rc != kExitOk) return rc;
  campaign::CampaignOptions o;
  o.out_dir = (fs::path(out) / "campaign").string();
  o.mode = "ci";  // each cell stops at its first failure: a verdict, soonest
  o.budget_scale = scale;
  o.libtorch = racelab::compile::libtorch_full_version();
  o.torch = torch;
  o.progress = !no_progress && ::isatty(2);
  reports::LiveReport c;
  o.report = reports::live_report(&c, o.out_dir);
  const bool interrupted = campaign::run_campaign(catalogue, o, &racelab::run_cell).interrupted;
  json doc = {{"format", "racelab-check-torch"},
              {"version", 1},
              {"torch", torch},
              {"python", python},
              {"budget_scale", scale},
              {"trials", c.report["campaign"]["trials"]},
              {"wall_s", c.report["campaign"]["wall_s"]},
              {"interrupted", interrupted},
              {"report", "campaign/report.json"},
              {"mechanisms", summarise(c.report)}};
  const std::string md = markdown(doc);
  write_file_atomically((fs::path(out) / "check-torch.json").string(), doc.dump(2) + "\n");
  write_file_atomically((fs::path(out) / "check-torch.md").string(), md);
  std::printf("\n%s\nwritten: %s/check-torch.md, %s/check-torch.json (campaign report: %s)\n", md.c_str(),
              out.c_str(), out.c_str(), c.files.html.c_str());
  return interrupted ? kExitInterrupted : kExitOk;
}

}  // namespace racelab::cli
