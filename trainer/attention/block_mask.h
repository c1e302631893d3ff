// trainer/attention/block_mask.h -- the block-mask description every attention
// call carries (the part of flex_attention's BlockMask the trainer needs).
//
// Two forms:
//  - causal(L): the target's self-attention. Lq = Lk = L, query i sees keys 0..i.
//  - blocks(L, anchors, B): the drafter's attention. Queries are K = anchors.size()
//    blocks of B positions (block i = anchor token + B-1 mask tokens, laid out at
//    query rows i*B .. i*B+B-1). Keys are the L context positions followed by the
//    same K*B block positions. Query (i, k) may attend
//      - context key j  iff  j < anchors[i]   (context strictly before the anchor:
//        the target's hidden states that exist when the block is drafted), and
//      - block key (i', k')  iff  i' == i     (bidirectional inside its own block,
//        never another block).
// build_mask() materialises the bool mask [Lq, Lk] (true = may attend);
// may_attend() is the same rule for one pair, written plainly, for tests.
#ifndef TRAINER_ATTENTION_BLOCK_MASK_H_
#define TRAINER_ATTENTION_BLOCK_MASK_H_

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace racelab::trainer {

struct MaskSpec {
  enum class Kind { kCausal, kBlocks };
  Kind kind = Kind::kCausal;
  int64_t seq_len = 0;            // context length L
  int64_t block_size = 0;         // B (blocks only)
  std::vector<int64_t> anchors;   // anchor positions in [0, L) (blocks only)

  static MaskSpec causal(int64_t seq_len);
  static MaskSpec blocks(int64_t seq_len, std::vector<int64_t> anchors, int64_t block_size);

  int64_t query_len() const;
  int64_t key_len() const;
  // Throws std::invalid_argument saying which field is out of range.
  void validate() const;
  std::string describe() const;
};

// On `device` (the device of the attention's q, k, v).
at::Tensor build_mask(const MaskSpec& spec, c10::Device device = at::kCPU);
bool may_attend(const MaskSpec& spec, int64_t query, int64_t key);

}  // namespace racelab::trainer

#endif  // TRAINER_ATTENTION_BLOCK_MASK_H_
