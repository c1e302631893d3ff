// trainer/model/target_file.h -- target models on disk.
//
//  - racelab target checkpoints (kind "target", trainer/checkpoint): written by
//    `racelab train-target`, loaded as a NativeTarget;
//  - TorchScript files (torch::jit::save format) for users' exported models.
//    Contract: forward(tokens[B,T] int64) -> (logits[B,T,V], hidden states of
//    every layer as a List[Tensor] of [B,T,d]), embed(tokens) -> [.., d],
//    head(h) -> logits, and int attributes vocab_size, d_model, max_len.
//    export_torchscript() writes a NativeTarget in exactly that form.
// A TorchScript target's own attention is the user's code, not masked_attention.
#ifndef TRAINER_MODEL_TARGET_FILE_H_
#define TRAINER_MODEL_TARGET_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "trainer/model/target.h"

namespace racelab::trainer {

// `extra` is stored in the checkpoint's metadata (corpus, held-out loss, ...).
void save_target(const NativeTarget& target, const std::string& path, const nlohmann::json& extra);
// Racelab checkpoint or TorchScript file; throws BadInput naming the file.
// The returned target is frozen (no gradients).
std::shared_ptr<Target> load_target(const std::string& path, nlohmann::json* meta = nullptr);
void export_torchscript(const NativeTarget& target, const std::string& path);
// FNV-1a of the target's parameters (TorchScript: of its state); drafters record it.
uint64_t target_fingerprint(Target& target);

}  // namespace racelab::trainer

#endif  // TRAINER_MODEL_TARGET_FILE_H_
