// RACELAB_OP_POINTS through the command line: a binary made like
// racelab_add_executable (op_points_cli: racelab::main plus the workload
// t_tensor_lost_update, which has no point of its own between its ops) finds,
// minimises and replays the lost update only with op points asked for.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace {

class OpPointsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/racelab-op-points-cli-XXXXXX";
    dir_ = ::mkdtemp(dir_template);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Runs `env ENV op_points_cli ARGS`; returns its exit code, output in log_.
  int racelab(const std::string& env, const std::string& args) {
    const std::string cmd = "cd " + dir_ + " && env " + env + " " + OP_POINTS_CLI + " " + args + " >log 2>&1";
    const int raw = std::system(cmd.c_str());
    std::ifstream in(dir_ + "/log");
    log_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }

  std::string dir_, log_;
};

const char kFill[] = "RACELAB_OP_POINTS=aten::fill_";

}  // namespace

TEST_F(OpPointsCli, WithoutOpPointsTheOpsNeverInterleave) {
  EXPECT_EQ(racelab("", "run t_tensor_lost_update -s dfs:1 -q"), 0) << log_;
}

TEST_F(OpPointsCli, WithThemTheLostUpdateIsFoundMinimisedAndReplayed) {
  EXPECT_EQ(racelab(kFill, "run t_tensor_lost_update -s dfs:1 -q"), 1) << log_;
  ASSERT_EQ(racelab(kFill, "reproduce t_tensor_lost_update -s random -q -o lost.json"), 1) << log_;
  EXPECT_EQ(racelab(kFill, "replay lost.min.json -n 5"), 0) << log_;
  EXPECT_NE(log_.find("5/5 reproduced wrong_result"), std::string::npos) << log_;
  // The schedule's steps are at aten::fill_: without op points they never
  // come, and the replay says so rather than judging another run.
  EXPECT_EQ(racelab("", "replay lost.min.json"), 4) << log_;
}

TEST_F(OpPointsCli, ABadFilterIsBadInput) {
  EXPECT_EQ(racelab("RACELAB_OP_POINTS='aten::('", "run t_tensor_lost_update -q"), 3) << log_;
  EXPECT_NE(log_.find("not a regular expression"), std::string::npos) << log_;
}
