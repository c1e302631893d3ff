// trainer/model/target.h -- the frozen target language model the drafters serve.
//
// Target is what the drafter and the evaluator need from a target model:
// logits, hidden states of the tapped layers, its token embedding and its LM
// head (both shared with the drafter). Two implementations:
//  - NativeTarget: racelab's own small causal transformer (pre-LN GPT), whose
//    attention goes through racelab::trainer::masked_attention, trained by
//    `racelab train-target` and saved as a racelab checkpoint;
//  - a TorchScript module loaded from a file (trainer/model/target_file.h).
#ifndef TRAINER_MODEL_TARGET_H_
#define TRAINER_MODEL_TARGET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "trainer/model/params.h"

namespace racelab::trainer {

struct TargetConfig {
  int64_t vocab_size = 65;
  int64_t d_model = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t max_len = 128;
  std::vector<int64_t> tap_layers;  // layers whose outputs feed the drafter; empty = all

  std::vector<int64_t> taps() const;  // tap_layers, or 0..layers-1
  nlohmann::json to_json() const;
  static TargetConfig from_json(const nlohmann::json& j);
  void validate() const;  // std::invalid_argument naming the field
};

struct TargetOutput {
  at::Tensor logits;  // [B, T, vocab]
  at::Tensor taps;    // [B, T, taps * d_model]: tapped layer outputs, concatenated
};

class Target {
 public:
  virtual ~Target() = default;
  virtual const TargetConfig& config() const = 0;
  virtual std::string kind() const = 0;  // "native" or "torchscript"
  virtual TargetOutput forward(const at::Tensor& tokens) = 0;
  virtual at::Tensor embed(const at::Tensor& tokens) = 0;  // [.., d_model]
  virtual at::Tensor head(const at::Tensor& h) = 0;        // LM head only (no final norm)
  // Where its weights are; its inputs must be there too (trainer/util/device.h).
  virtual c10::Device device() const = 0;
  virtual void to(c10::Device device) = 0;
};

class NativeTarget : public Target {
 public:
  NativeTarget(const TargetConfig& config, uint64_t seed);
  const TargetConfig& config() const override { return config_; }
  std::string kind() const override { return "native"; }
  TargetOutput forward(const at::Tensor& tokens) override;
  at::Tensor embed(const at::Tensor& tokens) override;
  at::Tensor head(const at::Tensor& h) override;
  c10::Device device() const override { return params_.device(); }
  void to(c10::Device device) override { params_.to(device); }
  ParamSet& params() { return params_; }
  const ParamSet& params() const { return params_; }

 private:
  TargetConfig config_;
  ParamSet params_;
};

}  // namespace racelab::trainer

#endif  // TRAINER_MODEL_TARGET_H_
