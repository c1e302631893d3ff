#include "trainer/model/drafter.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "trainer/attention/masked_attention.h"

namespace racelab::trainer {

nlohmann::json DrafterConfig::to_json() const {
  return {{"layers", layers}, {"heads", heads}, {"max_block", max_block}, {"gamma", gamma}};
}

DrafterConfig DrafterConfig::from_json(const nlohmann::json& j) {
  DrafterConfig c;
  c.layers = j.at("layers").get<int64_t>();
  c.heads = j.at("heads").get<int64_t>();
  c.max_block = j.at("max_block").get<int64_t>();
  c.gamma = j.at("gamma").get<double>();
  return c;
}

Drafter::Drafter(const DrafterConfig& config, const TargetConfig& target, uint64_t seed)
    : config_(config), d_model_(target.d_model) {
  if (config_.layers < 1) throw std::invalid_argument("drafter: layers must be >= 1");
  if (config_.heads < 1 || d_model_ % config_.heads != 0)
    throw std::invalid_argument(fmt::format("drafter: heads {} must divide d_model {}", config_.heads, d_model_));
  if (config_.gamma <= 0) throw std::invalid_argument("drafter: gamma must be > 0");
  auto gen = make_generator(seed);
  const auto d = d_model_;
  const auto taps = static_cast<int64_t>(target.taps().size());
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.layers));
  params_.add("ctx_fc_w", init_normal({d, taps * d}, 0.02, gen));
  params_.add("ctx_norm_w", at::ones({d}));
  params_.add("ctx_norm_b", at::zeros({d}));
  params_.add("block_pos", init_normal({config_.max_block, d}, 0.02, gen));
  for (int64_t l = 0; l < config_.layers; ++l) {
    auto p = fmt::format("layer{}.", l);
    params_.add(p + "ln1_w", at::ones({d}));
    params_.add(p + "ln1_b", at::zeros({d}));
    params_.add(p + "q_w", init_normal({d, d}, 0.02, gen));
    params_.add(p + "k_w", init_normal({d, d}, 0.02, gen));
    params_.add(p + "v_w", init_normal({d, d}, 0.02, gen));
    params_.add(p + "out_w", init_normal({d, d}, proj_std, gen));
    add_mlp_params(params_, p, d, proj_std, gen);
  }
  params_.add("lnf_w", at::ones({d}));
  params_.add("lnf_b", at::zeros({d}));
}

at::Tensor Drafter::forward(Target& target, const at::Tensor& ctx_taps, const at::Tensor& block_tokens,
                            const MaskSpec& spec) {
  const auto B = spec.block_size;
  if (B > config_.max_block)
    throw std::invalid_argument(fmt::format("drafter: block size {} exceeds max_block {}", B, config_.max_block));
  const auto H = config_.heads;
  // Context: concatenated target layers -> d_model -> norm, once for all layers.
  auto ctx = nnf::layer_norm(nnf::linear(ctx_taps, params_["ctx_fc_w"]), params_["ctx_norm_w"], params_["ctx_norm_b"]);
  auto offsets = at::arange(B, block_tokens.options().dtype(at::kLong)).repeat({static_cast<int64_t>(spec.anchors.size())});
  auto x = target.embed(block_tokens) + at::embedding(params_["block_pos"], offsets);
  for (int64_t l = 0; l < config_.layers; ++l) {
    auto p = fmt::format("layer{}.", l);
    auto h = nnf::layer_norm(x, params_[p + "ln1_w"], params_[p + "ln1_b"]);
    auto q = nnf::split_heads(nnf::linear(h, params_[p + "q_w"]), H);
    auto k = at::cat({nnf::linear(ctx, params_[p + "k_w"]), nnf::linear(h, params_[p + "k_w"])}, 1);
    auto v = at::cat({nnf::linear(ctx, params_[p + "v_w"]), nnf::linear(h, params_[p + "v_w"])}, 1);
    auto a = masked_attention(q, nnf::split_heads(k, H), nnf::split_heads(v, H), spec);
    x = x + nnf::linear(nnf::merge_heads(a), params_[p + "out_w"]);
    x = mlp_residual(params_, p, x);
  }
  return target.head(nnf::layer_norm(x, params_["lnf_w"], params_["lnf_b"]));
}

at::Tensor make_block_tokens(const at::Tensor& tokens, const std::vector<int64_t>& anchors, int64_t block_size,
                             int64_t mask_token) {
  const auto N = tokens.size(0), K = static_cast<int64_t>(anchors.size());
  auto out = at::full({N, K, block_size}, mask_token, tokens.options().dtype(at::kLong));
  auto idx = at::tensor(anchors, at::kLong).to(tokens.device());
  out.select(2, 0).copy_(tokens.index_select(1, idx));
  return out.view({N, K * block_size});
}

at::Tensor make_block_labels(const at::Tensor& tokens, const std::vector<int64_t>& anchors, int64_t block_size) {
  const auto T = tokens.size(1);
  std::vector<int64_t> idx;
  for (auto a : anchors)
    for (int64_t k = 0; k < block_size; ++k) {
      if (a + k >= T)
        throw std::invalid_argument(fmt::format("block labels: anchor {} + {} is past the sequence end {}", a, k, T));
      idx.push_back(a + k);
    }
  return tokens.index_select(1, at::tensor(idx, at::kLong).to(tokens.device()))
      .view({tokens.size(0), static_cast<int64_t>(anchors.size()), block_size});
}

std::vector<double> position_weights(int64_t block_size, double gamma) {
  std::vector<double> w;
  for (int64_t k = 1; k < block_size; ++k) w.push_back(std::exp(-static_cast<double>(k - 1) / gamma));
  return w;
}

DraftLoss weighted_block_loss(const at::Tensor& logits, const at::Tensor& labels, int64_t block_size, double gamma) {
  if (block_size < 2) throw std::invalid_argument("weighted_block_loss: block size must be >= 2");
  const auto N = labels.size(0), K = labels.size(1), V = logits.size(-1);
  auto lg = logits.reshape({N, K, block_size, V}).slice(2, 1);  // positions 1..B-1
  auto lb = labels.slice(2, 1);
  // Per-token CE, [N, K, B-1].
  auto ce = at::cross_entropy_loss(lg.reshape({-1, V}), lb.reshape({-1}), {}, at::Reduction::None)
                .view({N, K, block_size - 1});
  auto w = position_weights(block_size, gamma);
  double wsum = 0;
  for (auto x : w) wsum += x;
  auto wt = at::tensor(w, at::kFloat).to(logits.device()) / wsum;
  DraftLoss out;
  out.loss = (ce.mean(at::IntArrayRef{0, 1}) * wt).sum();
  auto correct = lg.argmax(-1).eq(lb).to(at::kFloat).mean(at::IntArrayRef{0, 1});
  auto acc = correct.cpu();  // one copy from the device, not one per position
  for (int64_t k = 0; k < block_size - 1; ++k) out.accuracy.push_back(acc[k].item<double>());
  return out;
}

}  // namespace racelab::trainer
