// Block-mask correctness, exhaustive for small cases, and the attention
// isolation it implies.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tiny.h"
#include "trainer/attention/block_mask.h"
#include "trainer/attention/masked_attention.h"

namespace {
using racelab::trainer::MaskSpec;

// The rule from first principles, written independently of may_attend().
bool by_definition(int64_t L, const std::vector<int64_t>& anchors, int64_t B, int64_t q, int64_t k) {
  int64_t block = q / B;
  if (k < L) return k < anchors[block];          // context strictly before this block's anchor
  int64_t kb = (k - L) / B;                       // which block the key belongs to
  return kb == block;                             // own block, both directions
}

TEST(BlockMask, CausalIsLowerTriangular) {
  for (int64_t L = 1; L <= 7; ++L) {
    auto m = racelab::trainer::build_mask(MaskSpec::causal(L));
    ASSERT_EQ(m.sizes(), (std::vector<int64_t>{L, L}));
    for (int64_t q = 0; q < L; ++q)
      for (int64_t k = 0; k < L; ++k) EXPECT_EQ(m[q][k].item<bool>(), k <= q) << q << "," << k;
  }
}

TEST(BlockMask, ExhaustiveSmallCases) {
  int cases = 0;
  for (int64_t L = 0; L <= 6; ++L)
    for (int64_t B = 1; B <= 4; ++B)
      // every anchor list of length 1..3 drawn from [0, L] (with repetition and any order)
      for (int64_t K = 1; K <= 3; ++K) {
        int64_t combos = 1;
        for (int64_t i = 0; i < K; ++i) combos *= (L + 1);
        for (int64_t c = 0; c < combos; ++c) {
          std::vector<int64_t> anchors;
          for (int64_t i = 0, x = c; i < K; ++i, x /= (L + 1)) anchors.push_back(x % (L + 1));
          auto spec = MaskSpec::blocks(L, anchors, B);
          auto m = racelab::trainer::build_mask(spec);
          ASSERT_EQ(m.size(0), K * B);
          ASSERT_EQ(m.size(1), L + K * B);
          auto acc = m.accessor<bool, 2>();
          for (int64_t q = 0; q < K * B; ++q)
            for (int64_t k = 0; k < L + K * B; ++k) {
              ASSERT_EQ(acc[q][k], by_definition(L, anchors, B, q, k)) << spec.describe() << " q=" << q << " k=" << k;
              ASSERT_EQ(acc[q][k], racelab::trainer::may_attend(spec, q, k));
            }
          ++cases;
        }
      }
  EXPECT_GT(cases, 1000);
}

TEST(BlockMask, HandWrittenExample) {
  // L=4 context, anchors {1, 3}, B=2. Rows: block0 (q0,q1), block1 (q2,q3).
  // Columns: c0 c1 c2 c3 | b0 b0 b1 b1
  auto m = racelab::trainer::build_mask(MaskSpec::blocks(4, {1, 3}, 2)).to(at::kInt);
  auto expected = at::tensor({1, 0, 0, 0, 1, 1, 0, 0,  //
                              1, 0, 0, 0, 1, 1, 0, 0,  //
                              1, 1, 1, 0, 0, 0, 1, 1,  //
                              1, 1, 1, 0, 0, 0, 1, 1},
                             at::kInt)
                      .view({4, 8});
  EXPECT_TRUE(at::equal(m, expected)) << m;
}

TEST(BlockMask, RejectsBadSpecs) {
  EXPECT_THROW(racelab::trainer::build_mask(MaskSpec::blocks(4, {5}, 2)), std::invalid_argument);
  EXPECT_THROW(racelab::trainer::build_mask(MaskSpec::blocks(4, {}, 2)), std::invalid_argument);
  EXPECT_THROW(racelab::trainer::build_mask(MaskSpec::blocks(4, {1}, 0)), std::invalid_argument);
}

// Through the real attention path: changing keys/values a query may not see does
// not change its output; changing ones it may see does.
TEST(MaskedAttention, BlocksSeeOnlyTheirContextAndThemselves) {
  tiny::quiet_setup();
  const int64_t L = 6, B = 3;
  auto spec = MaskSpec::blocks(L, {2, 4}, B);
  at::manual_seed(0);
  auto q = at::randn({1, 1, spec.query_len(), 4});
  auto k = at::randn({1, 1, spec.key_len(), 4});
  auto v = at::randn({1, 1, spec.key_len(), 4});
  auto base = racelab::trainer::masked_attention(q, k, v, spec);
  for (int64_t key = 0; key < spec.key_len(); ++key) {
    auto v2 = v.clone();
    v2[0][0][key] += 10.0;
    auto out = racelab::trainer::masked_attention(q, k, v2, spec);
    for (int64_t query = 0; query < spec.query_len(); ++query) {
      bool changed = !at::allclose(out[0][0][query], base[0][0][query]);
      EXPECT_EQ(changed, racelab::trainer::may_attend(spec, query, key)) << "query " << query << " key " << key;
    }
  }
  EXPECT_THROW(racelab::trainer::masked_attention(q, k.slice(2, 1), v, spec), std::invalid_argument);
}

}  // namespace
