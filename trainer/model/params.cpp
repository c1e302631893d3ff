#include "trainer/model/params.h"

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "trainer/util/errors.h"
#include "compile/torch_compat.h"

namespace racelab::trainer {

at::Tensor ParamSet::add(const std::string& name, at::Tensor value, bool trainable) {
  if (index_.count(name)) throw std::logic_error("parameter registered twice: " + name);
  value = value.detach().contiguous();
  if (trainable) value.requires_grad_(true);
  index_[name] = items_.size();
  items_.emplace_back(name, value);
  return value;
}

const at::Tensor& ParamSet::operator[](const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) throw std::logic_error("no parameter named " + name);
  return items_[it->second].second;
}

std::vector<at::Tensor> ParamSet::trainable() const {
  std::vector<at::Tensor> out;
  for (auto& [name, t] : items_)
    if (t.requires_grad()) out.push_back(t);
  return out;
}

void ParamSet::freeze() {
  for (auto& [name, t] : items_) t.requires_grad_(false);
}

void ParamSet::to(c10::Device device) {
  for (auto& [name, t] : items_) {
    const bool trainable = t.requires_grad();
    t = t.detach().to(device);
    if (trainable) t.requires_grad_(true);
  }
}

c10::Device ParamSet::device() const { return items_.empty() ? c10::Device(at::kCPU) : items_.front().second.device(); }

int64_t ParamSet::numel() const {
  int64_t n = 0;
  for (auto& [name, t] : items_) n += t.numel();
  return n;
}

void ParamSet::load(const std::map<std::string, at::Tensor>& saved, const std::string& what,
                    const std::string& prefix) {
  at::NoGradGuard no_grad;
  for (auto& [name, t] : items_) {
    auto it = saved.find(prefix + name);
    if (it == saved.end()) throw BadInput(fmt::format("{}: parameter '{}' is missing", what, prefix + name));
    if (it->second.sizes() != t.sizes() || it->second.scalar_type() != t.scalar_type())
      throw BadInput(fmt::format("{}: parameter '{}' has shape {} ({}), expected {} ({})", what, prefix + name,
                                 fmt::join(it->second.sizes(), "x"), c10::toString(it->second.scalar_type()),
                                 fmt::join(t.sizes(), "x"), c10::toString(t.scalar_type())));
    t.copy_(it->second);
  }
}

at::Generator make_generator(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

at::Tensor init_normal(at::IntArrayRef shape, double std, at::Generator& gen) {
  auto t = at::empty(shape, at::kFloat);
  // normal_ takes the generator's own lock; each model owns its generator.
  return t.normal_(0.0, std, gen);
}

void add_mlp_params(ParamSet& params, const std::string& prefix, int64_t d, double proj_std, at::Generator& gen) {
  params.add(prefix + "ln2_w", at::ones({d}));
  params.add(prefix + "ln2_b", at::zeros({d}));
  params.add(prefix + "fc_w", init_normal({4 * d, d}, 0.02, gen));
  params.add(prefix + "fc_b", at::zeros({4 * d}));
  params.add(prefix + "proj_w", init_normal({d, 4 * d}, proj_std, gen));
  params.add(prefix + "proj_b", at::zeros({d}));
}

at::Tensor mlp_residual(const ParamSet& params, const std::string& prefix, const at::Tensor& x) {
  auto h = nnf::layer_norm(x, params[prefix + "ln2_w"], params[prefix + "ln2_b"]);
  h = at::gelu(nnf::linear(h, params[prefix + "fc_w"], params[prefix + "fc_b"]));
  return x + nnf::linear(h, params[prefix + "proj_w"], params[prefix + "proj_b"]);
}

}  // namespace racelab::trainer
