// Determinism with several worker threads, and --resume equivalence.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tiny.h"
#include "trainer/model/target_file.h"
#include "trainer/train/run.h"
#include "trainer/train/target_trainer.h"

namespace {

std::vector<std::vector<double>> train(uint64_t seed, int64_t workers, int64_t steps) {
  auto c = tiny::corpus();
  auto t = tiny::target(c);
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < workers; ++r) ranks.push_back(r);
  racelab::trainer::DrafterPipeline p(t, c, tiny::drafter(), tiny::run(steps, seed), ranks);
  auto st = p.run({});
  EXPECT_TRUE(st.errors.empty()) << st.errors.front();
  EXPECT_EQ(st.steps_done, workers * steps);
  std::vector<std::vector<double>> out;
  for (auto& w : p.workers()) out.push_back(w.losses);
  return out;
}

TEST(Pipeline, SameSeedSameLossesWithThreeWorkers) {
  tiny::quiet_setup();
  auto a = train(11, 3, 5), b = train(11, 3, 5), c = train(12, 3, 5);
  EXPECT_EQ(a, b);  // bitwise: each worker's stream is independent of thread timing
  EXPECT_NE(a, c);
  EXPECT_NE(a[0], a[1]);  // workers train different drafters on different data
  for (auto& w : a)
    for (auto l : w) EXPECT_TRUE(std::isfinite(l));
}

TEST(Pipeline, LossDecreases) {
  tiny::quiet_setup();
  auto c = tiny::corpus();
  auto t = tiny::target(c);
  // A drafter shares the target's embedding and head: train the target a little
  // so that they mean something.
  racelab::trainer::TargetTrainConfig tt;
  tt.steps = 60;
  tt.batch = 8;
  tt.seq_len = 32;
  tt.warmup = 5;
  tt.adamw.lr = 1e-2;
  for (auto& p : t->params().items()) p.second.requires_grad_(true);
  racelab::trainer::train_target(*t, c, tt, nullptr, false, nullptr);
  t->params().freeze();
  auto cfg = tiny::run(40);
  cfg.seq_lens = {24};
  cfg.block_sizes = {4};
  cfg.adamw.lr = 1e-2;
  racelab::trainer::DrafterPipeline p(t, c, tiny::drafter(), cfg, {0});
  ASSERT_TRUE(p.run({}).errors.empty());
  auto& l = p.workers()[0].losses;
  double first = (l[0] + l[1] + l[2]) / 3, last = (l[37] + l[38] + l[39]) / 3;
  EXPECT_LT(last, first * 0.9) << first << " -> " << last;
}

TEST(Pipeline, ResumeContinuesExactly) {
  tiny::quiet_setup();
  auto dir = tiny::temp_dir("resume");
  auto c = tiny::corpus();
  auto t = tiny::target(c);
  auto cfg = tiny::run(8);
  auto identity = racelab::trainer::drafter_identity(*t, c, tiny::drafter(), cfg);

  racelab::trainer::DrafterPipeline full(t, c, tiny::drafter(), cfg, {0, 1});
  ASSERT_TRUE(full.run({}).errors.empty());

  auto first_cfg = cfg;
  first_cfg.stop_after = 3;  // like Ctrl-C after 3 steps
  racelab::trainer::DrafterPipeline first(t, c, tiny::drafter(), first_cfg, {0, 1});
  auto st = first.run({});
  EXPECT_TRUE(st.interrupted);
  first.save(dir + "/d.ckpt", identity);

  racelab::trainer::DrafterPipeline resumed(t, c, tiny::drafter(), cfg, {0, 1});
  resumed.load(dir + "/d.ckpt", identity);
  EXPECT_EQ(resumed.workers()[0].step, 3);
  ASSERT_TRUE(resumed.run({}).errors.empty());
  for (size_t w = 0; w < 2; ++w) {
    auto& all = full.workers()[w].losses;
    auto& before = first.workers()[w].losses;
    auto& after = resumed.workers()[w].losses;
    ASSERT_EQ(before.size(), 3u);
    ASSERT_EQ(after.size(), 5u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(before[i], all[i]);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(after[i], all[3 + i]) << "worker " << w << " step " << 4 + i;
  }
}

TEST(Pipeline, StopFlagStopsEveryThread) {
  tiny::quiet_setup();
  auto c = tiny::corpus();
  auto t = tiny::target(c);
  std::atomic<bool> stop{true};
  racelab::trainer::DrafterPipeline p(t, c, tiny::drafter(), tiny::run(50), {0, 1});
  racelab::trainer::DraftRunHooks hooks;
  hooks.stop = &stop;
  auto st = p.run(hooks);
  EXPECT_TRUE(st.interrupted);
  EXPECT_EQ(st.steps_done, 0);
}

}  // namespace
