// compile/attention_math.h -- the eager masked attention that the
// compile layer captures: softmax(q k^T / sqrt(d), masked) v. It plays the part
// of flex_attention's reference implementation.
#ifndef RACELAB_COMPILE_ATTENTION_MATH_H_
#define RACELAB_COMPILE_ATTENTION_MATH_H_

#include <vector>

#include <ATen/ATen.h>

namespace racelab::compile {

// q: [B, H, Lq, D], k/v: [B, H, Lk, D], mask: [Lq, Lk] bool (true = may attend).
at::Tensor eager_masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                  const at::Tensor& mask);

// The same as a TensorFn over {q, k, v, mask}; records the module call
// "masked_attention" through the current runtime's module-call patch.
std::vector<at::Tensor> masked_attention_fn(const std::vector<at::Tensor>& inputs);

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_ATTENTION_MATH_H_
