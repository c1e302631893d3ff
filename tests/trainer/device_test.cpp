// --device: which names are accepted, and that every tensor the trainer makes
// follows its models onto the device they were moved to. This machine has no
// GPU, so the moves are checked on LibTorch's meta device (shapes, no data):
// a tensor that is made on the CPU where it should follow the model shows up
// as a CPU tensor here, the same mistake that fails on CUDA.
#include <gtest/gtest.h>

#include <ATen/Context.h>

#include <stdexcept>
#include <string>

#include "tiny.h"
#include "trainer/attention/block_mask.h"
#include "trainer/model/drafter.h"
#include "trainer/pipeline/drafter_pipeline.h"
#include "trainer/util/device.h"

namespace {

const c10::Device kMeta(c10::DeviceType::Meta);

TEST(Device, NamesAreCheckedWithAReason) {
  EXPECT_EQ(racelab::trainer::check_compute_device("cpu"), "");
  EXPECT_NE(racelab::trainer::check_compute_device("tpu").find("is not a device"), std::string::npos);
  EXPECT_NE(racelab::trainer::check_compute_device("meta").find("cpu or cuda only"), std::string::npos);
  if (!at::hasCUDA()) {
    EXPECT_NE(racelab::trainer::check_compute_device("cuda").find("without CUDA"), std::string::npos);
    EXPECT_NE(racelab::trainer::check_compute_device("cuda:1").find("without CUDA"), std::string::npos);
  }
  EXPECT_TRUE(racelab::trainer::compute_device("cpu").is_cpu());
  try {
    racelab::trainer::compute_device("tpu");
    FAIL() << "tpu accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--device 'tpu'"), std::string::npos) << e.what();
  }
}

TEST(Device, ParamsMoveAsLeavesAndKeepWhetherTheyTrain) {
  auto c = tiny::corpus();
  racelab::trainer::Drafter drafter(tiny::drafter(), tiny::target(c)->config(), 7);
  const auto before = drafter.params().trainable().size();
  ASSERT_GT(before, 0u);
  drafter.to(kMeta);
  EXPECT_EQ(drafter.params().device(), kMeta);
  EXPECT_EQ(drafter.params().trainable().size(), before);  // an optimizer still gets them all
  for (auto& [name, t] : drafter.params().items()) {
    EXPECT_EQ(t.device(), kMeta) << name;
    EXPECT_TRUE(t.is_leaf()) << name;  // a non-leaf would get no .grad()
  }
  auto target = tiny::target(c);  // frozen
  target->to(kMeta);
  EXPECT_EQ(target->device(), kMeta);
  EXPECT_TRUE(target->params().trainable().empty());  // frozen stays frozen
}

TEST(Device, DraftersFollowTheTarget) {
  auto c = tiny::corpus();
  auto target = tiny::target(c);
  target->to(kMeta);
  racelab::trainer::DrafterPipeline pipeline(target, c, tiny::drafter(), tiny::run(), {0, 1});
  for (auto& w : pipeline.workers()) EXPECT_EQ(w.drafter->params().device(), kMeta) << "worker " << w.rank;
}

TEST(Device, BatchesAndMasksAreMadeOnTheAskedDevice) {
  auto c = tiny::corpus();
  const auto cfg = tiny::run();
  auto cpu = racelab::trainer::make_draft_batch(c, cfg, 1, 3);
  auto meta = racelab::trainer::make_draft_batch(c, cfg, 1, 3, kMeta);
  EXPECT_TRUE(cpu.tokens.device().is_cpu());
  EXPECT_EQ(meta.tokens.device(), kMeta);
  EXPECT_EQ(meta.tokens.sizes(), cpu.tokens.sizes());
  EXPECT_EQ(meta.anchors, cpu.anchors);  // the batch is the same one, only placed elsewhere

  auto spec = racelab::trainer::MaskSpec::blocks(cpu.seq_len, cpu.anchors, cpu.block_size);
  auto m = racelab::trainer::build_mask(spec, kMeta);
  EXPECT_EQ(m.device(), kMeta);
  EXPECT_EQ(m.scalar_type(), at::kBool);
  EXPECT_EQ(m.sizes(), racelab::trainer::build_mask(spec).sizes());
}

}  // namespace
