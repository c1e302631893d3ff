// `racelab explain "<message>"`: from an error message to the scenarios that
// reproduce it, the mitigations that hold there (read from the scenarios'
// expectations) and the walkthrough. The messages: cli/known_messages.h.
// With --torch V (or --python CMD, whose torch it asks), the expectations are
// that version's (expectations_by_torch), and each scenario says whether its
// race is present there.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "campaign/catalogue.h"
#include "compile/torch_compat.h"
#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/known_messages.h"
#include "engine/python_host.h"
#include "racelab/exit_code.h"

namespace racelab::cli {
namespace {

namespace fs = std::filesystem;

// "holds" for a holds_over expectation, else "fails (classes)".
std::string verdict_of(const campaign::Expectation& e) {
  if (e.holds_over >= 0) return "holds";
  std::string classes = e.outcome;
  for (const auto& a : e.allowed) classes += (classes.empty() ? "" : "+") + a;
  return classes.empty() ? "fails" : "fails (" + classes + ")";
}

void print_scenario(const campaign::Scenario& s, const std::string& torch) {
  std::printf("  %s (%s): %s\n", s.name.c_str(), s.race.c_str(), s.file.c_str());
  // Whether the race is there on that torch: what its scenario expects with no
  // mitigation, by that version's entries (expectations_by_torch).
  const campaign::Expectation* none = torch.empty() ? nullptr : s.expectation_for("none");
  if (none != nullptr) {
    std::printf("    on torch %s: %s (%s)\n", torch.c_str(),
                verdict_of(*none) == "holds" ? "absent, no mitigation needed" : "present",
                s.torch.empty() ? "the scenario's default expectations"
                                : ("its expectations for torch " + s.torch).c_str());
  }
  std::string holds, fails;
  for (const auto& e : s.expectations) {
    const std::string v = verdict_of(e);
    if (v == "holds")
      holds += (holds.empty() ? "" : ", ") + e.mitigation;
    else
      fails += (fails.empty() ? "" : ", ") + e.mitigation + v.substr(5);
  }
  std::printf("    mitigations that hold: %s\n", holds.empty() ? "(none)" : holds.c_str());
  std::printf("    mitigations that fail: %s\n", fails.empty() ? "(none)" : fails.c_str());
  std::printf("    reproduce: racelab run %s -m none -s random -n 10\n", s.workload.c_str());
}

void print_known(const KnownMessage& m, const std::vector<campaign::Scenario>& catalogue, const std::string& dir,
                 const std::string& torch) {
  std::printf("known message: %s\n  %s\n\n%s\n\nscenarios that reproduce it (expectations from %s):\n", m.id.c_str(),
              m.message.c_str(), m.meaning.c_str(), dir.c_str());
  for (const auto& name : m.scenarios) {
    const campaign::Scenario* found = nullptr;
    for (const auto& s : catalogue)
      if (s.name == name) found = &s;
    if (found != nullptr)
      print_scenario(*found, torch);
    else
      std::printf("  %s: not in this catalogue yet\n", name.c_str());
  }
  std::printf("\nwalkthrough: %s\n", m.walkthrough.c_str());
}

}  // namespace

int explain_command(int argc, char** argv) {
  CLI::App app{"Explain an error message: the scenarios that reproduce it, the mitigations that hold there "
               "(from the scenarios' expectations) and the walkthrough. Paste the message, or a whole traceback "
               "line; exit 1 when the message is not known",
               argv[0]};
  std::vector<std::string> words;
  std::string dir;
  bool list = false;
  app.add_option("message", words, "The error message (quote it, or give it as several words)");
  app.add_option("--scenarios", dir, "The scenario catalogue to read expectations from (default: scenarios/)");
  app.add_flag("--list", list, "List every known message");
  std::string torch;
  app.add_option("--torch", torch, "Say which races apply to this torch version (major.minor, e.g. 2.14)");
  add_python_option(app);  // --python CMD: that Python's torch
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  if (int rc = campaign::check_torch_flag("explain", torch); rc != kExitOk) return rc;
  if (list) {
    for (const auto& m : known_messages()) {
      std::string scenarios;
      for (const auto& s : m.scenarios) scenarios += (scenarios.empty() ? "" : ", ") + s;
      std::printf("%-26s %s\n%-26s scenarios: %s\n", m.id.c_str(), m.message.c_str(), "", scenarios.c_str());
    }
    return kExitOk;
  }
  if (words.empty())
    return usage_error(app, CLI::RequiredError("message (or --list)"));
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;

  const auto matches = match_message(text);
  if (matches.empty()) {
    std::printf("not known: racelab has no scenario for this message.\n"
                "Known messages: racelab explain --list. Walkthrough of the known ones: docs/WALKTHROUGH.md\n");
    return kExitExpectationFailed;  // 1: not known
  }
  if (dir.empty()) dir = campaign::default_catalogue();
  int rc = kExitOk;
  // Only the expectations are read: the workloads are not looked up, so the
  // lean binary answers without LibTorch (cli/torch_part.h).
  // Which torch: --torch, else --python's (asked once; a Python without torch is bad input).
  if (torch.empty() && app.count("--python") > 0) {
    std::string why;
    torch = probe_torch_version(python_command(), &why);
    if (torch.empty()) {
      std::fprintf(stderr, "racelab explain: %s\n", why.c_str());
      return kExitBadInput;
    }
  }
  if (!torch.empty()) torch = campaign::libtorch_key(torch);
  const auto catalogue = campaign::load_catalogue({dir}, &rc, racelab::compile::libtorch_full_version(),
                                                 /*check_workloads=*/false, torch);
  if (rc != kExitOk) return rc;
  for (size_t i = 0; i < matches.size(); ++i) {
    if (i > 0) std::printf("\n");
    print_known(*matches[i], catalogue, dir, torch);
  }
  return kExitOk;
}

}  // namespace racelab::cli
