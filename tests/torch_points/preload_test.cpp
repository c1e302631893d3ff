// libracelab_op_points_preload.so in a LibTorch program that knows nothing of
// racelab (tensor_race), beside a stand-in host that exports the C ABI
// (c_abi_host.c): which ops become points, from the environment alone.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

struct Outcome {
  int status = -1;
  std::string out, err;
  std::vector<std::string> points;  // what the host recorded, in order
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs tensor_race with `env` (NAME=VALUE words) and LD_PRELOAD=`preload`.
Outcome run(const std::string& preload, const std::string& env) {
  char dir_template[] = "/tmp/racelab-op-points-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string cmd = "env C_ABI_HOST_OUT=" + dir + "/points LD_PRELOAD='" + preload + "' " + env + " " +
                          TENSOR_RACE + " >" + dir + "/out 2>" + dir + "/err";
  Outcome r;
  const int raw = std::system(cmd.c_str());
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(dir + "/out");
  r.err = slurp(dir + "/err");
  std::ifstream points(dir + "/points");
  for (std::string line; std::getline(points, line);) r.points.push_back(line);
  std::system(("rm -rf " + dir).c_str());
  return r;
}

const std::string kBoth = std::string(C_ABI_HOST) + " " + OP_POINTS_PRELOAD;

}  // namespace

TEST(OpPointsPreload, MatchingOpsBecomePointsOfTheHostBesideIt) {
  Outcome r = run(kBoth, "RACELAB_OP_POINTS='aten::fill_'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "count 100\n");
  EXPECT_EQ(r.points, std::vector<std::string>(100, "aten::fill_")) << "one point per fill_ call, nothing else";
}

TEST(OpPointsPreload, WithoutTheVariableNothingIsAPoint) {
  Outcome r = run(kBoth, "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "count 100\n");
  EXPECT_TRUE(r.points.empty());
}

TEST(OpPointsPreload, SamplingKeepsTheSameEntriesEveryRun) {
  Outcome a = run(kBoth, "RACELAB_OP_POINTS='aten::fill_' RACELAB_OP_POINTS_RATE=0.5 RACELAB_OP_POINTS_SEED=9");
  Outcome b = run(kBoth, "RACELAB_OP_POINTS='aten::fill_' RACELAB_OP_POINTS_RATE=0.5 RACELAB_OP_POINTS_SEED=9");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_GT(a.points.size(), 20u);
  EXPECT_LT(a.points.size(), 80u);
  EXPECT_EQ(a.points.size(), b.points.size());
}

TEST(OpPointsPreload, WithNoHostLoadedTheProgramRunsUnchanged) {
  Outcome r = run(OP_POINTS_PRELOAD, "RACELAB_OP_POINTS='.*'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "count 100\n");
}

TEST(OpPointsPreload, ABadFilterIsBadInputBeforeTheProgramStarts) {
  Outcome r = run(kBoth, "RACELAB_OP_POINTS='aten::('");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("RACELAB_OP_POINTS"), std::string::npos) << r.err;
  EXPECT_TRUE(r.points.empty());
}
