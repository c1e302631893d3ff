// trainer/attention/masked_attention.h -- the trainer's ONE attention entry point.
//
// Every attention in racelab's trainer (the target's causal attention and the
// drafter's block attention) goes through masked_attention(). It builds the bool
// mask from the MaskSpec and calls the compile layer's call_attention(), exactly
// where a PyTorch user calls torch.compile(flex_attention)(q, k, v, block_mask).
// Because sequence length and block size live in the spec, a new length or block
// size at run time is a new input signature for the compile layer: it recompiles.
#ifndef TRAINER_ATTENTION_MASKED_ATTENTION_H_
#define TRAINER_ATTENTION_MASKED_ATTENTION_H_

#include <ATen/ATen.h>

#include "trainer/attention/block_mask.h"

namespace racelab::trainer {

// q: [batch, heads, spec.query_len(), head_dim]; k, v: [batch, heads, spec.key_len(), head_dim].
// Throws std::invalid_argument when the shapes do not match the spec.
at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& spec);

}  // namespace racelab::trainer

#endif  // TRAINER_ATTENTION_MASKED_ATTENTION_H_
