// Greedy speculative decoding is lossless, tau is 1 without a drafter, and a
// trained drafter is accepted more often than an untrained one.
#include <gtest/gtest.h>

#include "tiny.h"
#include "trainer/eval/speculative.h"
#include "trainer/model/target_file.h"
#include "trainer/train/target_trainer.h"
#include "compile/torch_compat.h"

namespace {

TEST(Speculative, LosslessAndTau) {
  tiny::quiet_setup();
  auto c = tiny::corpus();
  racelab::trainer::TargetConfig tc;
  tc.vocab_size = c.vocab_size;
  tc.d_model = 32;
  tc.layers = 2;
  tc.heads = 2;
  tc.max_len = 48;
  auto target = std::make_shared<racelab::trainer::NativeTarget>(tc, 1);
  racelab::trainer::TargetTrainConfig tt;
  tt.steps = 120;
  tt.batch = 8;
  tt.seq_len = 32;
  tt.warmup = 10;
  tt.adamw.lr = 1e-2;
  auto tr = racelab::trainer::train_target(*target, c, tt, nullptr, false, nullptr);
  target->params().freeze();
  EXPECT_LT(tr.heldout_loss, 2.0);  // it learned something (uniform is ln 65 = 4.17)

  auto cfg = tiny::run(80);
  cfg.seq_lens = {32};
  cfg.block_sizes = {4};
  cfg.anchors = 8;
  cfg.batch = 4;
  cfg.adamw.lr = 1e-2;
  racelab::trainer::DrafterPipeline trained(target, c, tiny::drafter(), cfg, {0});
  ASSERT_TRUE(trained.run({}).errors.empty());
  racelab::trainer::DrafterPipeline untrained(target, c, tiny::drafter(), cfg, {1});

  racelab::trainer::EvalConfig ec;
  ec.prompts = 4;
  ec.prompt_len = 8;
  ec.new_tokens = 24;
  ec.block_size = 4;
  auto r = racelab::trainer::evaluate(*target, {nullptr, untrained.workers()[0].drafter.get(), trained.workers()[0].drafter.get()},
                             c, ec);
  for (auto& x : r) {
    EXPECT_EQ(x.prompts, 4);
    EXPECT_TRUE(x.lossless()) << x.lossless_prompts;  // speculative == target-only greedy
  }
  EXPECT_DOUBLE_EQ(r[0].tau, 1.0);
  EXPECT_GT(r[2].tau, r[1].tau);
  EXPECT_GT(r[2].tau, 1.2);
  EXPECT_LE(r[2].tau, 4.0);
}

TEST(Speculative, TorchScriptTargetMatchesNative) {
  tiny::quiet_setup();
  auto c = tiny::corpus();
  auto target = tiny::target(c);
  auto path = tiny::temp_dir("ts") + "/target.pt";
  racelab::trainer::export_torchscript(*target, path);
  auto ts = racelab::trainer::load_target(path);
  EXPECT_EQ(ts->kind(), "torchscript");
  EXPECT_EQ(ts->config().vocab_size, c.vocab_size);
  at::NoGradGuard ng;
  auto tokens = at::randint(c.vocab_size - 1, {2, 12}, at::kLong);
  auto a = target->forward(tokens), b = ts->forward(tokens);
  EXPECT_TRUE(at::allclose(a.logits, b.logits, 1e-4, 1e-5));
  EXPECT_TRUE(at::allclose(a.taps, b.taps, 1e-4, 1e-5));
  // A drafter trains against it.
  racelab::trainer::DrafterPipeline p(ts, c, tiny::drafter(), tiny::run(2), {0});
  EXPECT_TRUE(p.run({}).errors.empty());
}

}  // namespace
