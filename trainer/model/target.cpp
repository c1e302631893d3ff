#include "trainer/model/target.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "trainer/attention/masked_attention.h"

namespace racelab::trainer {

std::vector<int64_t> TargetConfig::taps() const {
  if (!tap_layers.empty()) return tap_layers;
  std::vector<int64_t> all;
  for (int64_t l = 0; l < layers; ++l) all.push_back(l);
  return all;
}

nlohmann::json TargetConfig::to_json() const {
  return {{"vocab_size", vocab_size}, {"d_model", d_model}, {"layers", layers},
          {"heads", heads},           {"max_len", max_len}, {"tap_layers", taps()}};
}

TargetConfig TargetConfig::from_json(const nlohmann::json& j) {
  TargetConfig c;
  c.vocab_size = j.at("vocab_size").get<int64_t>();
  c.d_model = j.at("d_model").get<int64_t>();
  c.layers = j.at("layers").get<int64_t>();
  c.heads = j.at("heads").get<int64_t>();
  c.max_len = j.at("max_len").get<int64_t>();
  c.tap_layers = j.at("tap_layers").get<std::vector<int64_t>>();
  return c;
}

void TargetConfig::validate() const {
  auto need = [](bool ok, const std::string& msg) {
    if (!ok) throw std::invalid_argument("target config: " + msg);
  };
  need(vocab_size >= 2, fmt::format("vocab_size {} < 2", vocab_size));
  need(d_model >= 8, fmt::format("d_model {} < 8", d_model));
  need(layers >= 1, fmt::format("layers {} < 1", layers));
  need(heads >= 1 && d_model % heads == 0, fmt::format("heads {} must divide d_model {}", heads, d_model));
  need(max_len >= 2, fmt::format("max_len {} < 2", max_len));
  for (auto t : tap_layers) need(t >= 0 && t < layers, fmt::format("tap layer {} outside [0, {})", t, layers));
}

NativeTarget::NativeTarget(const TargetConfig& config, uint64_t seed) : config_(config) {
  config_.validate();
  config_.tap_layers = config_.taps();
  auto gen = make_generator(seed);
  const auto d = config_.d_model, V = config_.vocab_size;
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.layers));
  params_.add("tok_emb", init_normal({V, d}, 0.02, gen));
  params_.add("pos_emb", init_normal({config_.max_len, d}, 0.02, gen));
  for (int64_t l = 0; l < config_.layers; ++l) {
    auto p = fmt::format("layer{}.", l);
    params_.add(p + "ln1_w", at::ones({d}));
    params_.add(p + "ln1_b", at::zeros({d}));
    params_.add(p + "qkv_w", init_normal({3 * d, d}, 0.02, gen));
    params_.add(p + "qkv_b", at::zeros({3 * d}));
    params_.add(p + "out_w", init_normal({d, d}, proj_std, gen));
    params_.add(p + "out_b", at::zeros({d}));
    add_mlp_params(params_, p, d, proj_std, gen);
  }
  params_.add("lnf_w", at::ones({d}));
  params_.add("lnf_b", at::zeros({d}));
  params_.add("head_w", init_normal({V, d}, 0.02, gen));
}

at::Tensor NativeTarget::embed(const at::Tensor& tokens) { return at::embedding(params_["tok_emb"], tokens); }

at::Tensor NativeTarget::head(const at::Tensor& h) { return nnf::linear(h, params_["head_w"]); }

TargetOutput NativeTarget::forward(const at::Tensor& tokens) {
  const auto T = tokens.size(1);
  if (T > config_.max_len)
    throw std::invalid_argument(fmt::format("target: sequence of {} tokens exceeds max_len {}", T, config_.max_len));
  const auto spec = MaskSpec::causal(T);
  auto x = embed(tokens) + params_["pos_emb"].slice(0, 0, T);
  std::vector<at::Tensor> outs;
  for (int64_t l = 0; l < config_.layers; ++l) {
    auto p = fmt::format("layer{}.", l);
    auto h = nnf::layer_norm(x, params_[p + "ln1_w"], params_[p + "ln1_b"]);
    auto qkv = nnf::linear(h, params_[p + "qkv_w"], params_[p + "qkv_b"]).chunk(3, -1);
    auto a = masked_attention(nnf::split_heads(qkv[0], config_.heads), nnf::split_heads(qkv[1], config_.heads),
                              nnf::split_heads(qkv[2], config_.heads), spec);
    x = x + nnf::linear(nnf::merge_heads(a), params_[p + "out_w"], params_[p + "out_b"]);
    x = mlp_residual(params_, p, x);
    outs.push_back(x);
  }
  std::vector<at::Tensor> tapped;
  for (auto t : config_.tap_layers) tapped.push_back(outs[static_cast<size_t>(t)]);
  TargetOutput out;
  out.taps = at::cat(tapped, -1);
  out.logits = head(nnf::layer_norm(x, params_["lnf_w"], params_["lnf_b"]));
  return out;
}

}  // namespace racelab::trainer
