// trainer/train/adamw.h -- torch::optim::AdamW behind a small facade.
//
// The facade keeps <torch/optim.h> (which drags in torch::nn, ~30 s of
// compile time per translation unit) out of every other file, and gives the
// optimizer state a byte form for checkpoints.
#ifndef TRAINER_TRAIN_ADAMW_H_
#define TRAINER_TRAIN_ADAMW_H_

#include <memory>
#include <vector>

#include <ATen/ATen.h>

namespace racelab::trainer {

struct AdamWOptions {
  double lr = 3e-3;
  double weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.98;
  double grad_clip = 1.0;  // global L2 norm; <= 0 disables
};

class AdamW {
 public:
  AdamW(std::vector<at::Tensor> params, const AdamWOptions& options);
  ~AdamW();
  AdamW(const AdamW&) = delete;
  AdamW& operator=(const AdamW&) = delete;

  void zero_grad();
  void step();  // clips, then steps
  void set_lr(double lr);
  std::vector<char> save() const;
  void load(const std::vector<char>& bytes);  // throws racelab::trainer::BadInput

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace racelab::trainer

#endif  // TRAINER_TRAIN_ADAMW_H_
