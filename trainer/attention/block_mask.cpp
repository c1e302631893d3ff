#include "trainer/attention/block_mask.h"

#include <stdexcept>

#include <fmt/format.h>

namespace racelab::trainer {

MaskSpec MaskSpec::causal(int64_t seq_len) {
  MaskSpec s;
  s.kind = Kind::kCausal;
  s.seq_len = seq_len;
  return s;
}

MaskSpec MaskSpec::blocks(int64_t seq_len, std::vector<int64_t> anchors, int64_t block_size) {
  MaskSpec s;
  s.kind = Kind::kBlocks;
  s.seq_len = seq_len;
  s.anchors = std::move(anchors);
  s.block_size = block_size;
  return s;
}

int64_t MaskSpec::query_len() const {
  return kind == Kind::kCausal ? seq_len : static_cast<int64_t>(anchors.size()) * block_size;
}
int64_t MaskSpec::key_len() const { return kind == Kind::kCausal ? seq_len : seq_len + query_len(); }

void MaskSpec::validate() const {
  if (seq_len < 1 && kind == Kind::kCausal) throw std::invalid_argument(fmt::format("mask: seq_len {} < 1", seq_len));
  if (kind == Kind::kCausal) return;
  if (seq_len < 0) throw std::invalid_argument(fmt::format("mask: seq_len {} < 0", seq_len));
  if (block_size < 1) throw std::invalid_argument(fmt::format("mask: block_size {} < 1", block_size));
  if (anchors.empty()) throw std::invalid_argument("mask: no anchors");
  for (auto a : anchors)
    if (a < 0 || a > seq_len)
      throw std::invalid_argument(fmt::format("mask: anchor {} outside [0, seq_len={}]", a, seq_len));
}

std::string MaskSpec::describe() const {
  if (kind == Kind::kCausal) return fmt::format("causal(L={})", seq_len);
  return fmt::format("blocks(L={}, anchors={}, B={})", seq_len, anchors.size(), block_size);
}

bool may_attend(const MaskSpec& spec, int64_t q, int64_t k) {
  if (spec.kind == MaskSpec::Kind::kCausal) return k <= q;
  int64_t block = q / spec.block_size;
  if (k < spec.seq_len) return k < spec.anchors[static_cast<size_t>(block)];
  return (k - spec.seq_len) / spec.block_size == block;
}

at::Tensor build_mask(const MaskSpec& spec, c10::Device device) {
  spec.validate();
  if (spec.kind == MaskSpec::Kind::kCausal)
    return at::ones({spec.seq_len, spec.seq_len}, at::TensorOptions().dtype(at::kBool).device(device)).tril();
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
  auto K = static_cast<int64_t>(spec.anchors.size());
  auto B = spec.block_size;
  // Each block's value repeated for its B rows; expand + reshape rather than
  // repeat_interleave, which LibTorch 1.13 lacks on the meta device the tests use.
  auto per_row = [&](const at::Tensor& per_block) { return per_block.unsqueeze(1).expand({K, B}).reshape({K * B}); };
  auto anchors = per_row(at::tensor(spec.anchors, at::kLong).to(device));               // [K*B]
  auto ctx = at::arange(spec.seq_len, longs).unsqueeze(0).lt(anchors.unsqueeze(1));  // [K*B, L]
  auto block_id = per_row(at::arange(K, longs));
  auto own = block_id.unsqueeze(1).eq(block_id.unsqueeze(0));  // [K*B, K*B]
  return at::cat({ctx, own}, 1);
}

}  // namespace racelab::trainer
