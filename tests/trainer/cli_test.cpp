// `racelab train` / `train-target`: exit codes and messages for bad flags and
// bad files, and one tiny end-to-end run.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include <ATen/Context.h>
#include <nlohmann/json.hpp>

#include "tests/cli/racelab_cli.h"
#include "tiny.h"

namespace {

using racelab::testing::racelab;
using Result = racelab::testing::CliResult;

const char* kTiny =
    "--d-model 32 --layers 1 --heads 2 --max-len 48 --target-steps 20 --target-seq-len 24 --target-batch 4 "
    "--steps 4 --batch 2 --seq-lens 16,24 --block-sizes 2,3 --anchors 3 --drafter-layers 1 --drafter-heads 2 "
    "--eval-prompts 2 --eval-tokens 8 --corpus-tokens 8192 --quiet";

TEST(Cli, HelpListsTheFlags) {
  auto r = racelab("train --help");
  EXPECT_EQ(r.code, 0);
  for (auto flag : {"--workers", "--mitigation", "--resume", "--block-sizes", "--seq-lens", "--freeze", "--device"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << flag;
  EXPECT_EQ(racelab("train-target --help").code, 0);
}

TEST(Cli, BadFlagsAreUsageErrors) {
  struct Case {
    const char* args;
    const char* says;
  } cases[] = {
      {"train --workers 0", "--workers"},
      {"train --workers many", "--workers"},
      {"train --mitigation bogus", "global_lock"},  // lists the valid names
      {"train --block-sizes 4,x", "--block-sizes"},
      {"train --block-sizes 1", "block size 1"},
      {"train --no-such-flag", "no-such-flag"},
      {"train --freeze", "--freeze"},
      {"train --eval-tokens 500", "--eval-tokens"},
      {"train-target --steps", "--steps"},
      {"train --device tpu", "not a device"},
      {"train-target --device meta", "cpu or cuda only"},
  };
  for (auto& c : cases) {
    auto r = racelab(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(Cli, CudaWithoutCudaIsAUsageErrorSayingWhy) {
  if (at::hasCUDA()) GTEST_SKIP() << "this LibTorch has CUDA and a GPU is visible";
  for (auto args : {"train --device cuda", "train-target --device cuda:0"}) {
    auto r = racelab(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("without CUDA"), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(Cli, BadFilesAreBadInput) {
  auto dir = tiny::temp_dir("cli_bad");
  {
    std::ofstream(dir + "/short.txt") << "too short";
    std::ofstream(dir + "/garbage.pt") << std::string(200, 'g');
  }
  auto r = racelab("train-target --data " + dir + "/short.txt --quiet");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("short.txt"), std::string::npos) << r.output;
  r = racelab("train --target " + dir + "/garbage.pt --quiet");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("garbage.pt"), std::string::npos) << r.output;
  // A missing input file is bad input (3) in every command, as in `minimize`.
  for (const std::string args : {"train --target /nonexistent/target.pt", "train --data /nonexistent/data.txt",
                                 "train-target --data /nonexistent/data.txt", "train-target --load /nonexistent/t.pt"}) {
    r = racelab(args + " --quiet");
    EXPECT_EQ(r.code, 3) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("/nonexistent/"), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(Cli, StopAfterIsNotAnInterruptAndResumeFinishes) {
  auto dir = tiny::temp_dir("cli_stop_after");
  auto r = racelab(std::string("train ") + kTiny + " --no-eval --stop-after 1 --out " + dir);
  ASSERT_EQ(r.code, 0) << r.output;  // was 130, the code of a Ctrl-C
  {
    std::ifstream in(dir + "/summary.json");
    auto s = nlohmann::json::parse(in);
    EXPECT_FALSE(s["interrupted"].get<bool>());
    EXPECT_TRUE(s["stopped_early"].get<bool>());
    EXPECT_EQ(s["drafters"]["steps_done"], 2);  // 2 workers x 1 step
    EXPECT_EQ(s["device"], "cpu");               // the default, named in the summary
  }
  r = racelab(std::string("train ") + kTiny + " --no-eval --resume --out " + dir);
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(dir + "/summary.json");
  auto s = nlohmann::json::parse(in);
  EXPECT_FALSE(s["stopped_early"].get<bool>());
  EXPECT_EQ(s["drafters"]["steps_done"], 6);  // the 3 steps per worker left
}

TEST(Cli, ResumeWithNothingToResumeIsBadInput) {
  auto dir = tiny::temp_dir("cli_resume_missing");
  // No run directory: never a silent fresh start.
  auto r = racelab(std::string("train ") + kTiny + " --resume --out " + dir + "/never-ran");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("never-ran' does not exist"), std::string::npos) << r.output;
  // A run directory without a drafters checkpoint.
  r = racelab(std::string("train ") + kTiny + " --resume --out " + dir);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("no checkpoint '" + dir + "/drafters.ckpt'"), std::string::npos) << r.output;
  // A directory where the checkpoint should be: with --resume and without.
  ASSERT_EQ(::mkdir((dir + "/drafters.ckpt").c_str(), 0755), 0);
  r = racelab(std::string("train ") + kTiny + " --resume --out " + dir);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("is not a checkpoint file"), std::string::npos) << r.output;
  r = racelab(std::string("train ") + kTiny + " --no-eval --out " + dir);
  EXPECT_EQ(r.code, 3) << r.output;  // was 70, an internal error
  EXPECT_NE(r.output.find(dir + "/drafters.ckpt"), std::string::npos) << r.output;
}

TEST(Cli, TinyRunEndToEndThenCorruptResumeIsRefused) {
  auto dir = tiny::temp_dir("cli_run");
  auto r = racelab(std::string("train ") + kTiny + " --mitigation global_lock --out " + dir);
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(dir + "/summary.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The summary names its checkpoints relative to itself, never by this machine's path.
  EXPECT_EQ(text.find(dir), std::string::npos) << text;
  auto s = nlohmann::json::parse(text);
  EXPECT_EQ(s["drafters"]["checkpoint"].get<std::string>(), "drafters.ckpt");
  EXPECT_EQ(s["drafters"]["steps_done"], 8);
  EXPECT_TRUE(s["eval"]["lossless"].get<bool>());
  EXPECT_GE(s["eval"]["mean_tau"].get<double>(), 1.0);
  EXPECT_TRUE(s["target"].contains("heldout_loss"));
  // Metrics JSONL: one line per drafter step with per-position accuracy.
  std::ifstream m(dir + "/metrics.jsonl");
  int steps = 0;
  for (std::string line; std::getline(m, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == "step") {
      ++steps;
      EXPECT_EQ(j["accuracy"].size(), j["block_size"].get<size_t>() - 1);
    }
  }
  EXPECT_EQ(steps, 8);

  // Corrupt the drafters checkpoint: --resume refuses it with exit code 3.
  {
    std::fstream f(dir + "/drafters.ckpt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-50, std::ios::end);
    f.put('\x42');
  }
  r = racelab(std::string("train ") + kTiny + " --mitigation global_lock --resume --out " + dir);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("drafters.ckpt"), std::string::npos) << r.output;
}

}  // namespace
