// Checkpoints: round trip, and refusal of truncated, corrupt and mismatched files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tiny.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/target_file.h"
#include "trainer/train/run.h"
#include "trainer/util/errors.h"
#include "compile/torch_compat.h"

namespace {

std::vector<char> slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const std::string& p, const std::vector<char>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(b.data(), static_cast<std::streamsize>(b.size()));
}

// The message of the BadInput the loader throws, or "" when it accepted the file.
template <class F>
std::string refusal(F load) {
  try {
    load();
  } catch (const racelab::trainer::BadInput& e) {
    return e.what();
  }
  return "";
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tiny::quiet_setup();
    dir = tiny::temp_dir("ckpt");
    corpus = tiny::corpus();
    target = tiny::target(corpus);
    cfg = tiny::run(2);
    identity = racelab::trainer::drafter_identity(*target, corpus, tiny::drafter(), cfg);
    racelab::trainer::DrafterPipeline p(target, corpus, tiny::drafter(), cfg, {0, 1});
    ASSERT_TRUE(p.run({}).errors.empty());
    path = dir + "/drafters.ckpt";
    p.save(path, identity);
    saved_param = p.workers()[1].drafter->params().items()[0].second.clone();
  }
  std::string load_into_fresh(const std::string& file, const nlohmann::json& id) {
    racelab::trainer::DrafterPipeline p(target, corpus, tiny::drafter(), cfg, {0, 1});
    return refusal([&] { p.load(file, id); });
  }
  std::string dir, path;
  racelab::trainer::data::Corpus corpus;
  std::shared_ptr<racelab::trainer::NativeTarget> target;
  racelab::trainer::DraftRunConfig cfg;
  nlohmann::json identity;
  at::Tensor saved_param;
};

TEST_F(CheckpointTest, RoundTripRestoresParametersAndSteps) {
  racelab::trainer::DrafterPipeline p(target, corpus, tiny::drafter(), cfg, {0, 1});
  p.load(path, identity);
  EXPECT_TRUE(at::equal(p.workers()[1].drafter->params().items()[0].second, saved_param));
  EXPECT_EQ(p.workers()[0].step, 2);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));  // written via tmp + rename
}

TEST_F(CheckpointTest, TruncatedIsRefused) {
  auto bytes = slurp(path);
  for (size_t keep : {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    auto p = dir + "/trunc.ckpt";
    spit(p, std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
    auto msg = load_into_fresh(p, identity);
    EXPECT_NE(msg.find("trunc.ckpt"), std::string::npos) << keep << ": " << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << keep << ": " << msg;
  }
}

TEST_F(CheckpointTest, CorruptByteIsRefused) {
  auto bytes = slurp(path);
  bytes[bytes.size() - 100] ^= 0x5A;
  spit(dir + "/corrupt.ckpt", bytes);
  auto msg = load_into_fresh(dir + "/corrupt.ckpt", identity);
  EXPECT_NE(msg.find("checksum"), std::string::npos) << msg;
  bytes = slurp(path);
  bytes[0] = 'X';
  spit(dir + "/magic.ckpt", bytes);
  EXPECT_NE(load_into_fresh(dir + "/magic.ckpt", identity).find("bad magic"), std::string::npos);
}

TEST_F(CheckpointTest, MismatchedRunIsRefused) {
  auto other = tiny::run(2, /*seed=*/99);
  auto msg = load_into_fresh(path, racelab::trainer::drafter_identity(*target, corpus, tiny::drafter(), other));
  EXPECT_NE(msg.find("different run"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'run'"), std::string::npos) << msg;
  // A different target (other weights) is refused too.
  auto t2 = tiny::target(corpus, 4);
  msg = load_into_fresh(path, racelab::trainer::drafter_identity(*t2, corpus, tiny::drafter(), cfg));
  EXPECT_NE(msg.find("target_fingerprint"), std::string::npos) << msg;
  // Different worker set.
  racelab::trainer::DrafterPipeline three(target, corpus, tiny::drafter(), cfg, {0, 1, 2});
  msg = refusal([&] { three.load(path, identity); });
  EXPECT_NE(msg.find("workers"), std::string::npos) << msg;
  // A target checkpoint is not a drafters checkpoint.
  racelab::trainer::save_target(*target, dir + "/target.ckpt", {});
  EXPECT_NE(load_into_fresh(dir + "/target.ckpt", identity).find("expected 'drafters'"), std::string::npos);
}

TEST_F(CheckpointTest, TargetRoundTripAndGarbageTarget) {
  racelab::trainer::save_target(*target, dir + "/target.ckpt", {{"heldout_loss", 1.5}});
  nlohmann::json meta;
  auto loaded = racelab::trainer::load_target(dir + "/target.ckpt", &meta);
  EXPECT_EQ(meta["heldout_loss"], 1.5);
  auto tokens = at::randint(corpus.vocab_size - 1, {2, 10}, at::kLong);
  at::NoGradGuard ng;
  EXPECT_TRUE(at::equal(loaded->forward(tokens).logits, target->forward(tokens).logits));
  EXPECT_EQ(racelab::trainer::target_fingerprint(*loaded), racelab::trainer::target_fingerprint(*target));
  spit(dir + "/garbage.pt", std::vector<char>(100, 'x'));
  auto msg = refusal([&] { racelab::trainer::load_target(dir + "/garbage.pt"); });
  EXPECT_NE(msg.find("garbage.pt"), std::string::npos) << msg;
}

}  // namespace
