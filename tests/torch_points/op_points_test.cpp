// racelab/op_points.h: ATen op entries become points a strategy can interleave
// at, chosen by the filter and by a deterministic sampling rate.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include "engine/cell.h"
#include "racelab/controller.h"
#include "racelab/op_points.h"

namespace {

// t_tensor_lost_update: tensor_workload.cpp.
racelab::CellSummary dfs1() {
  racelab::CellSpec c;
  c.workload = "t_tensor_lost_update";
  c.strategy = "dfs:1";
  c.max_trials = 1000;
  c.supervised = false;
  return racelab::run_cell(c, [](const racelab::TrialRecord&) {});
}

// Records the names of the points of the threads it is attached for.
class RecordingController : public racelab::Controller {
 public:
  bool manages_current_thread() const override { return true; }
  void on_point(const char* name) override { names.emplace_back(name); }
  int on_thread_create() override { return 1; }
  void on_thread_start(int) override {}
  void on_thread_end(int) override {}
  void on_join(int) override {}
  void on_block(const void*, const char*) override {}
  void on_release(const void*) override {}
  void on_acquire(const void*, const char*) override {}
  std::vector<std::string> names;
};

// The points 200 fill_ calls make on a fresh thread under `options`.
std::vector<std::string> fill_points(const racelab::OpPointOptions& options) {
  racelab::OpPoints op_points(options);
  RecordingController rec;
  at::Tensor t = at::zeros({1});
  racelab::attach(&rec);
  std::thread([&] {
    for (int i = 0; i < 200; ++i) t.fill_(i);
  }).join();
  racelab::detach();
  return rec.names;
}

}  // namespace

TEST(OpPoints, WithoutThemTheOpsCannotBeInterleaved) {
  auto sum = dfs1();
  EXPECT_TRUE(sum.exhausted);
  EXPECT_EQ(sum.failures, 0);
}

TEST(OpPoints, AnOpPointBetweenReadAndWriteLosesAnUpdate) {
  racelab::OpPoints op_points({"aten::fill_"});
  auto sum = dfs1();
  EXPECT_TRUE(sum.exhausted);
  EXPECT_GT(sum.by_outcome["wrong_result"], 0);
  EXPECT_GT(op_points.points(), 0);
}

TEST(OpPoints, TheFilterChoosesTheOps) {
  racelab::OpPoints op_points({"aten::(add_|copy_)"});
  auto sum = dfs1();
  EXPECT_TRUE(sum.exhausted);
  EXPECT_EQ(sum.failures, 0);
  EXPECT_EQ(op_points.points(), 0);
}

TEST(OpPoints, UnmanagedThreadsAndNoControllerMakeNoPoints) {
  racelab::OpPoints op_points({".*"});
  at::Tensor t = at::zeros({1});
  t.fill_(1);  // no controller attached
  EXPECT_EQ(op_points.points(), 0);
}

TEST(OpPoints, SamplingIsDeterministic) {
  auto all = fill_points({"aten::fill_", 1.0, 0});
  ASSERT_EQ(all.size(), 200u);
  EXPECT_EQ(all.front(), "aten::fill_");
  auto half = fill_points({"aten::fill_", 0.5, 7});
  EXPECT_GT(half.size(), 50u);
  EXPECT_LT(half.size(), 150u);
  EXPECT_EQ(fill_points({"aten::fill_", 0.5, 7}).size(), half.size()) << "same seed, same points";
  EXPECT_TRUE(fill_points({"aten::fill_", 0.0, 0}).empty());
}

TEST(OpPoints, BadOptionsAreRefused) {
  EXPECT_THROW(racelab::OpPoints({"aten::(add_"}), std::invalid_argument);
  EXPECT_THROW(racelab::OpPoints({".*", 1.5}), std::invalid_argument);
  racelab::OpPoints first({".*"});
  EXPECT_THROW(racelab::OpPoints({".*"}), std::logic_error);
}

TEST(OpPoints, OptionsFromTheEnvironment) {
  ::unsetenv("RACELAB_OP_POINTS");
  EXPECT_FALSE(racelab::OpPoints::options_from_env().has_value());
  ::setenv("RACELAB_OP_POINTS", "aten::(add_|copy_|index_put_).*", 1);
  ::setenv("RACELAB_OP_POINTS_RATE", "0.25", 1);
  ::setenv("RACELAB_OP_POINTS_SEED", "3", 1);
  auto o = racelab::OpPoints::options_from_env();
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->filter, "aten::(add_|copy_|index_put_).*");
  EXPECT_DOUBLE_EQ(o->rate, 0.25);
  EXPECT_EQ(o->seed, 3u);
  ::setenv("RACELAB_OP_POINTS_RATE", "lots", 1);
  EXPECT_THROW(racelab::OpPoints::options_from_env(), std::invalid_argument);
  ::unsetenv("RACELAB_OP_POINTS");
  ::unsetenv("RACELAB_OP_POINTS_RATE");
  ::unsetenv("RACELAB_OP_POINTS_SEED");
}
