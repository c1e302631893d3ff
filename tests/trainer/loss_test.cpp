// The drafter's loss: CE at block positions 1..B-1 weighted by exp(-(k-1)/gamma).
#include <gtest/gtest.h>

#include <cmath>

#include "trainer/model/drafter.h"

namespace {

TEST(BlockLoss, WeightsDecayExponentially) {
  auto w = racelab::trainer::position_weights(5, 2.0);
  ASSERT_EQ(w.size(), 4u);
  for (size_t k = 1; k <= 4; ++k) EXPECT_DOUBLE_EQ(w[k - 1], std::exp(-(static_cast<double>(k) - 1) / 2.0));
  EXPECT_DOUBLE_EQ(w[0], 1.0);
}

TEST(BlockLoss, MatchesHandComputedWeightedCrossEntropy) {
  at::manual_seed(1);
  const int64_t N = 2, K = 3, B = 4, V = 7;
  const double gamma = 1.5;
  auto logits = at::randn({N, K * B, V});
  auto labels = at::randint(V, {N, K, B}, at::kLong);
  auto out = racelab::trainer::weighted_block_loss(logits, labels, B, gamma);

  auto lg = logits.view({N, K, B, V});
  double num = 0, den = 0;
  std::vector<double> correct(B - 1, 0);
  for (int64_t k = 1; k < B; ++k) {
    double wk = std::exp(-(k - 1) / gamma), ce = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < K; ++i) {
        auto row = lg[n][i][k];
        auto y = labels[n][i][k].item<int64_t>();
        ce += -(row[y] - row.logsumexp(0)).item<double>();
        correct[k - 1] += (row.argmax().item<int64_t>() == y);
      }
    num += wk * ce / (N * K);
    den += wk;
  }
  EXPECT_NEAR(out.loss.item<double>(), num / den, 1e-5);
  ASSERT_EQ(out.accuracy.size(), static_cast<size_t>(B - 1));
  for (int64_t k = 0; k < B - 1; ++k) EXPECT_NEAR(out.accuracy[k], correct[k] / (N * K), 1e-6);
}

TEST(BlockLoss, AnchorPositionIsNotTrained) {
  at::manual_seed(2);
  auto logits = at::randn({1, 2 * 3, 5}).requires_grad_(true);
  auto labels = at::randint(5, {1, 2, 3}, at::kLong);
  auto out = racelab::trainer::weighted_block_loss(logits, labels, 3, 4.0);
  out.loss.backward();
  auto g = logits.grad().view({1, 2, 3, 5});
  EXPECT_EQ(g.select(2, 0).abs().sum().item<double>(), 0.0);  // position 0: the anchor
  EXPECT_GT(g.select(2, 1).abs().sum().item<double>(), 0.0);
  // Later positions weigh less: a small gamma makes position 2's gradient smaller.
  auto l2 = at::zeros({1, 6, 5}).requires_grad_(true);
  auto out2 = racelab::trainer::weighted_block_loss(l2, labels, 3, 0.5);
  out2.loss.backward();
  auto g2 = l2.grad().view({1, 2, 3, 5});
  EXPECT_GT(g2.select(2, 1).abs().sum().item<double>(), g2.select(2, 2).abs().sum().item<double>() * 5);
}

TEST(BlockInputs, AnchorThenMasksAndShiftedLabels) {
  auto tokens = at::arange(10, at::kLong).view({1, 10}) + 100;
  auto in = racelab::trainer::make_block_tokens(tokens, {2, 5}, 3, 9);
  EXPECT_TRUE(at::equal(in, at::tensor({102, 9, 9, 105, 9, 9}, at::kLong).view({1, 6})));
  auto lb = racelab::trainer::make_block_labels(tokens, {2, 5}, 3);
  EXPECT_TRUE(at::equal(lb, at::tensor({102, 103, 104, 105, 106, 107}, at::kLong).view({1, 2, 3})));
  EXPECT_THROW(racelab::trainer::make_block_labels(tokens, {8}, 3), std::invalid_argument);
}

}  // namespace
