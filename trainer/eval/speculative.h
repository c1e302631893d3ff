// trainer/eval/speculative.h -- greedy speculative decoding, the target verifying.
//
// Per verify step: the drafter proposes B-1 tokens after the anchor (the last
// token the target produced) from the target's hidden states before the anchor;
// the target scores anchor+drafts in one forward pass; the longest prefix of
// drafts equal to the target's own greedy choices is accepted, plus one bonus
// token from the target. tau = mean tokens gained per verify step (bonus
// included): 1 without a drafter, at most B. Greedy acceptance makes the output
// identical to target-only greedy decoding -- evaluate() checks that.
// Sequences are padded to the target's max_len so every call has one shape (the
// causal mask makes padding invisible to real positions).
#ifndef TRAINER_EVAL_SPECULATIVE_H_
#define TRAINER_EVAL_SPECULATIVE_H_

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/data/corpus.h"
#include "trainer/model/drafter.h"
#include "trainer/model/target.h"

namespace racelab::trainer {

struct SpecStats {
  int64_t verify_steps = 0;
  int64_t accepted_tokens = 0;  // tokens gained in verify steps (drafts + bonus)
  double tau() const { return verify_steps ? static_cast<double>(accepted_tokens) / verify_steps : 1.0; }
};

std::vector<int64_t> greedy_generate(Target& target, const std::vector<int64_t>& prompt, int64_t new_tokens,
                                     int64_t pad_token);
// drafter == nullptr: no drafts (tau == 1).
std::vector<int64_t> speculative_generate(Target& target, Drafter* drafter, const std::vector<int64_t>& prompt,
                                          int64_t new_tokens, int64_t block_size, int64_t mask_token, SpecStats& stats);

struct EvalConfig {
  int64_t prompts = 16;
  int64_t prompt_len = 32;
  int64_t new_tokens = 64;
  int64_t block_size = 4;
  uint64_t seed = 1;
};

struct EvalResult {
  double tau = 1;
  int64_t verify_steps = 0;
  int64_t prompts = 0;
  int64_t lossless_prompts = 0;  // speculative output == target-only greedy
  bool lossless() const { return lossless_prompts == prompts; }
  double speculative_seconds = 0, greedy_seconds = 0;
  nlohmann::json to_json() const;
};

// One result per drafter (nullptr = no drafter). Target-only greedy decoding of
// each prompt runs once and is the reference for every drafter.
std::vector<EvalResult> evaluate(Target& target, const std::vector<Drafter*>& drafters, const data::Corpus& corpus,
                                 const EvalConfig& cfg);

}  // namespace racelab::trainer

#endif  // TRAINER_EVAL_SPECULATIVE_H_
