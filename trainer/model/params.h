// trainer/model/params.h -- named parameters and the few layer functions the
// models are written with.
//
// The models are plain structs of ATen tensors (no torch::nn), so that model code
// stays cheap to compile and every initialisation draws from an explicit,
// seeded generator: a drafter built for worker i is the same on every run,
// whatever the other threads do.
#ifndef TRAINER_MODEL_PARAMS_H_
#define TRAINER_MODEL_PARAMS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace racelab::trainer {

class ParamSet {
 public:
  // Registers `value` under `name` (a leaf that requires grad when trainable).
  at::Tensor add(const std::string& name, at::Tensor value, bool trainable = true);
  const at::Tensor& operator[](const std::string& name) const;
  const std::vector<std::pair<std::string, at::Tensor>>& items() const { return items_; }
  std::vector<at::Tensor> trainable() const;
  void freeze();  // requires_grad(false) on every parameter (the frozen target)
  // Moves every parameter to `device`; each stays a leaf, trainable if it was.
  // Call it before an optimizer takes the parameters: they are new tensors.
  void to(c10::Device device);
  // The device of the parameters (CPU for an empty set).
  c10::Device device() const;
  int64_t numel() const;
  // Copies values in place from `saved`; throws racelab::trainer::BadInput naming `what`
  // and the first missing or mis-shaped parameter.
  void load(const std::map<std::string, at::Tensor>& saved, const std::string& what, const std::string& prefix = "");

 private:
  std::vector<std::pair<std::string, at::Tensor>> items_;
  std::map<std::string, size_t> index_;
};

// Seeded initialisers (GPT-2 style: N(0, 0.02) weights, zero biases, unit norms).
at::Generator make_generator(uint64_t seed);
at::Tensor init_normal(at::IntArrayRef shape, double std, at::Generator& gen);

namespace nnf {
inline at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b = {}) {
  return at::linear(x, w, b);
}
inline at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::layer_norm(x, {x.size(-1)}, w, b, 1e-5);
}
// [B, L, H*D] -> [B, H, L, D] and back.
inline at::Tensor split_heads(const at::Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}
inline at::Tensor merge_heads(const at::Tensor& x) {
  return x.transpose(1, 2).contiguous().view({x.size(0), x.size(2), x.size(1) * x.size(3)});
}
}  // namespace nnf

// The feed-forward half of a pre-norm transformer block, the same in the target
// and the drafter: parameters `prefix`{ln2,fc,proj}_{w,b} (fc: d -> 4d, proj:
// 4d -> d with std proj_std), and the residual x + proj(gelu(fc(ln2(x)))).
void add_mlp_params(ParamSet& params, const std::string& prefix, int64_t d, double proj_std, at::Generator& gen);
at::Tensor mlp_residual(const ParamSet& params, const std::string& prefix, const at::Tensor& x);

}  // namespace racelab::trainer

#endif  // TRAINER_MODEL_PARAMS_H_
