// trainer/model/drafter.h -- a DFlash-style block drafter.
//
// A block is the anchor token (the last token the target produced) followed by
// B-1 mask tokens; the drafter denoises all B-1 in one forward pass.
//  - Context: the target's hidden states from several layers (Target::forward's
//    `taps`) are concatenated, projected to d_model and layer-normed once, then
//    injected as extra keys/values into EVERY drafter layer (each layer applies
//    its own k/v projections to them).
//  - Attention (racelab::trainer::masked_attention, MaskSpec::blocks): bidirectional
//    inside a block, context strictly before the anchor, never another block.
//  - Token embedding and LM head are the target's (frozen, shared); the drafter
//    owns an in-block position embedding, its layers and its final norm.
//  - Loss: cross-entropy at block positions k = 1..B-1 weighted by
//    exp(-(k-1)/gamma) (early positions matter most: a wrong k-th guess rejects
//    everything after it), normalised by the weight sum.
#ifndef TRAINER_MODEL_DRAFTER_H_
#define TRAINER_MODEL_DRAFTER_H_

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "trainer/attention/block_mask.h"
#include "trainer/model/params.h"
#include "trainer/model/target.h"

namespace racelab::trainer {

struct DrafterConfig {
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t max_block = 16;  // largest block size the position embedding covers
  double gamma = 4.0;      // loss decay over block positions
  nlohmann::json to_json() const;
  static DrafterConfig from_json(const nlohmann::json& j);
};

class Drafter {
 public:
  // d_model, vocabulary and tap width come from the target.
  Drafter(const DrafterConfig& config, const TargetConfig& target, uint64_t seed);

  // ctx_taps: [N, L, taps*d] (Target::forward().taps for the context);
  // block_tokens: [N, K*B] (anchor then mask tokens, per block);
  // spec: MaskSpec::blocks(L, anchors, B). Returns logits [N, K*B, vocab].
  at::Tensor forward(Target& target, const at::Tensor& ctx_taps, const at::Tensor& block_tokens,
                     const MaskSpec& spec);

  const DrafterConfig& config() const { return config_; }
  // Moves the parameters (before an optimizer takes them); see ParamSet::to.
  void to(c10::Device device) { params_.to(device); }
  ParamSet& params() { return params_; }
  const ParamSet& params() const { return params_; }

 private:
  DrafterConfig config_;
  int64_t d_model_;
  ParamSet params_;
};

// Block inputs for `anchors` in `tokens` [N, T]: [N, K*B] with the anchor token
// at each block's position 0 and `mask_token` elsewhere.
at::Tensor make_block_tokens(const at::Tensor& tokens, const std::vector<int64_t>& anchors, int64_t block_size,
                             int64_t mask_token);
// Labels [N, K, B]: tokens[a + k] (position 0 holds the anchor itself, unused).
at::Tensor make_block_labels(const at::Tensor& tokens, const std::vector<int64_t>& anchors, int64_t block_size);

struct DraftLoss {
  at::Tensor loss;                    // scalar, differentiable
  std::vector<double> accuracy;       // per block position k = 1..B-1 (size B-1)
};
// logits [N, K*B, V] (or [N, K, B, V]), labels [N, K, B].
DraftLoss weighted_block_loss(const at::Tensor& logits, const at::Tensor& labels, int64_t block_size, double gamma);
// The weights exp(-(k-1)/gamma) for k = 1..B-1.
std::vector<double> position_weights(int64_t block_size, double gamma);

}  // namespace racelab::trainer

#endif  // TRAINER_MODEL_DRAFTER_H_
