#include "trainer/train/adamw.h"

#include <sstream>

#include <torch/optim/adamw.h>
// after adamw.h: clip_grad.h relies on torch::Tensor being declared already
#include <torch/nn/utils/clip_grad.h>
#include <torch/serialize/archive.h>

#include "trainer/util/errors.h"

namespace racelab::trainer {

struct AdamW::Impl {
  std::vector<at::Tensor> params;
  double clip;
  torch::optim::AdamW opt;
  Impl(std::vector<at::Tensor> p, const AdamWOptions& o)
      : params(p),
        clip(o.grad_clip),
        opt(std::move(p), torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay).betas({o.beta1, o.beta2})) {}
};

AdamW::AdamW(std::vector<at::Tensor> params, const AdamWOptions& options)
    : impl_(std::make_unique<Impl>(std::move(params), options)) {}
AdamW::~AdamW() = default;

void AdamW::zero_grad() { impl_->opt.zero_grad(); }

void AdamW::step() {
  if (impl_->clip > 0) torch::nn::utils::clip_grad_norm_(impl_->params, impl_->clip);
  impl_->opt.step();
}

void AdamW::set_lr(double lr) {
  for (auto& g : impl_->opt.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
}

std::vector<char> AdamW::save() const {
  torch::serialize::OutputArchive archive;
  impl_->opt.save(archive);
  std::ostringstream out;
  archive.save_to(out);
  auto s = out.str();
  return {s.begin(), s.end()};
}

void AdamW::load(const std::vector<char>& bytes) {
  try {
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    torch::serialize::InputArchive archive;
    // The state was saved from wherever the parameters were; it goes where they are now.
    archive.load_from(in, impl_->params.empty() ? c10::Device(at::kCPU) : impl_->params.front().device());
    impl_->opt.load(archive);
  } catch (const std::exception& e) {
    throw BadInput(std::string("optimizer state cannot be restored: ") + e.what());
  }
}

}  // namespace racelab::trainer
