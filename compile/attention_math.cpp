// compile/attention_math.cpp -- see attention_math.h.
#include "compile/attention_math.h"

#include <cmath>
#include <stdexcept>

#include "compile/capture_state.h"

namespace racelab::compile {

at::Tensor eager_masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& mask) {
  // A large finite negative, not -inf: a fully masked row then gives a uniform
  // softmax instead of NaN, in eager and compiled runs alike.
  auto scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  scores = scores.masked_fill(mask.logical_not(), -1e9);
  return at::matmul(at::softmax(scores, -1), v);
}

std::vector<at::Tensor> masked_attention_fn(const std::vector<at::Tensor>& in) {
  if (in.size() != 4) throw std::invalid_argument("masked_attention expects {q, k, v, mask}");
  module_call(current_runtime(), "masked_attention");
  return {eager_masked_attention(in[0], in[1], in[2], in[3])};
}

}  // namespace racelab::compile
