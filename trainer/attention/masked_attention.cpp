#include "trainer/attention/masked_attention.h"

#include <stdexcept>

#include <fmt/format.h>

#include "compile/attention_kernel.h"

namespace racelab::trainer {

at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& spec) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    throw std::invalid_argument("masked_attention: q, k, v must be [batch, heads, len, head_dim]");
  if (q.size(2) != spec.query_len() || k.size(2) != spec.key_len() || v.size(2) != spec.key_len())
    throw std::invalid_argument(fmt::format("masked_attention: {} expects Lq={} Lk={}, got q {} k {}", spec.describe(),
                                            spec.query_len(), spec.key_len(), q.size(2), k.size(2)));
  return compile::call_attention(q, k, v, build_mask(spec, q.device()));
}

}  // namespace racelab::trainer
