// `racelab explain`: every known message is recognised inside surrounding
// text, the mitigations that hold come from the scenario files (a changed
// file changes the answer), an unknown message exits 1 with "not known", and
// the FX message can be found by grepping the repository.
#include <gtest/gtest.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "racelab_cli.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kFx = "Detected that you are using FX to symbolically trace a dynamo-optimized function";

using racelab::testing::racelab_args;
using Result = racelab::testing::CliResult;

std::string source(const std::string& rel) { return std::string(RACELAB_SOURCE_DIR) + "/" + rel; }

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// "mitigations that hold: a, b" as explain must print it for a scenario file.
std::string holds_line(const json& doc) {
  std::string holds;
  for (const auto& m : doc["mitigations"])
    if (doc["expectations"][m.get<std::string>()].contains("holds_over"))
      holds += (holds.empty() ? "" : ", ") + m.get<std::string>();
  return "mitigations that hold: " + holds;
}

TEST(Explain, TheFxMessageInsideATracebackLineNamesItsScenariosAndWhatHolds) {
  const Result r = racelab_args({"explain", "  File \"train.py\", line 88, in step\nRuntimeError: " + kFx +
                                           ". This is not\n   supported at the moment."});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("known message: fx_nested_trace"), std::string::npos) << r.output;
  for (const char* s : {"direct_leak", "stuck_true", "trainer"}) {
    const json doc = json::parse(read(source(std::string("scenarios/") + s + ".json")));
    EXPECT_NE(r.output.find(std::string("  ") + s + " ("), std::string::npos) << s << "\n" << r.output;
    EXPECT_NE(r.output.find(holds_line(doc)), std::string::npos) << holds_line(doc) << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("module_shim (error)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("walkthrough: docs/WALKTHROUGH.md"), std::string::npos) << r.output;
}

TEST(Explain, WhatHoldsIsReadFromTheScenarioFiles) {
  // A catalogue where only isolate_process holds against the direct leak.
  const fs::path dir = fs::temp_directory_path() / ("racelab-explain-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json doc = json::parse(read(source("scenarios/direct_leak.json")));
  for (auto& [name, e] : doc["expectations"].items()) {
    if (name == "isolate_process" || !e.contains("holds_over")) continue;
    const std::string why = e.value("why", "");
    e = {{"outcome", "error"}, {"why", why}};
  }
  std::ofstream(dir / "direct_leak.json") << doc.dump(2);
  const Result r = racelab_args({"explain", "--scenarios", dir.string(), kFx});
  fs::remove_all(dir);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("mitigations that hold: isolate_process\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("global_lock (error)"), std::string::npos) << r.output;
  // Scenarios the message names but the catalogue lacks are said to be missing.
  EXPECT_NE(r.output.find("stuck_true: not in this catalogue yet"), std::string::npos) << r.output;
}

TEST(Explain, EveryKnownMessageIsRecognisedInSurroundingText) {
  const std::vector<std::pair<std::string, std::string>> pasted{
      {"fx_nested_trace", "E   RuntimeError: " + kFx + ". This is not supported at the moment."},
      {"new_patcher_assertion",
       "  File \"/usr/lib/python3/dist-packages/torch/fx/_symbolic_trace.py\", line 712, in _new_patcher"},
      {"module_not_installed", "NameError: name '__compiled_fn_3' is not defined"},
      {"cuda_capture_unsupported",
       "RuntimeError: CUDA error: operation not permitted when stream is capturing\nCUDA kernel errors ..."},
      {"cuda_capture_invalidated",
       "RuntimeError: CUDA error: operation failed due to a previous error during capture"},
      {"config_patch_prior", "    assert not prior\nAssertionError"},
      {"recompile_limit", "W1205 torch._dynamo hit config.recompile_limit (8)\n   function: 'fn' (x.py:3)"},
      {"recompile_limit", "torch._dynamo hit config.cache_size_limit (8)"},
      {"compiler_stance", "RuntimeError: Detected recompile when torch.compile stance is 'fail_on_recompile'"},
      {"current_patcher", "AssertionError: CURRENT_PATCHER was changed during a revert_all_patches"},
  };
  for (const auto& [id, text] : pasted) {
    const Result r = racelab_args({"explain", text});
    EXPECT_EQ(r.code, 0) << id << "\n" << r.output;
    EXPECT_NE(r.output.find("known message: " + id), std::string::npos) << id << "\n" << r.output;
  }
  // Several words instead of one quoted argument work too.
  const Result words = racelab_args({"explain", "operation", "not", "permitted", "when", "stream", "is", "capturing"});
  EXPECT_EQ(words.code, 0) << words.output;
  EXPECT_NE(words.output.find("cuda_graph_capture"), std::string::npos) << words.output;
}

// With a torch version, each scenario says whether its race is there, by that
// version's expectations: the shared config patch is torch 2.6's race, gone on 2.14.
TEST(Explain, WithATorchVersionItSaysWhetherTheRaceIsPresentThere) {
  const Result on26 = racelab_args({"explain", "--torch", "2.6", "assert not prior"});
  ASSERT_EQ(on26.code, 0) << on26.output;
  EXPECT_NE(on26.output.find("on torch 2.6: present (the scenario's default expectations)"), std::string::npos)
      << on26.output;
  const Result on214 = racelab_args({"explain", "--torch", "2.14.1", "assert not prior"});
  ASSERT_EQ(on214.code, 0) << on214.output;
  EXPECT_NE(on214.output.find("on torch 2.14: absent, no mitigation needed (its expectations for torch 2.14)"),
            std::string::npos)
      << on214.output;
  // A Python that cannot import torch is bad input, named.
  const Result none = racelab_args({"explain", "--python", "no-such-python-racelab", "assert not prior"});
  EXPECT_EQ(none.code, 3) << none.output;
  EXPECT_NE(none.output.find("the Python 'no-such-python-racelab' cannot import torch"), std::string::npos)
      << none.output;
}

TEST(Explain, AnUnknownMessageIsNotKnownAndExits1) {
  for (const std::string text : {"Segmentation fault (core dumped)", "NameError: name 'lenght' is not defined"}) {
    const Result r = racelab_args({"explain", text});
    EXPECT_EQ(r.code, 1) << text << "\n" << r.output;
    EXPECT_NE(r.output.find("not known"), std::string::npos) << r.output;
  }
  EXPECT_EQ(racelab_args({"explain"}).code, 2);
}

TEST(Explain, TheFxMessageIsGreppableInTheRepository) {
  for (const char* file : {"cli/known_messages.cpp", "docs/WALKTHROUGH.md"})
    EXPECT_NE(read(source(file)).find(kFx), std::string::npos) << file;
  EXPECT_NE(read(source("README.md")).find("docs/WALKTHROUGH.md"), std::string::npos);
  // The anchor the _new_patcher and NameError entries link to.
  EXPECT_NE(read(source("docs/WALKTHROUGH.md")).find("\n## 4. Try the three fixes people try first\n"),
            std::string::npos);
}

}  // namespace
