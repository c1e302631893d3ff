// TEMPORARY eager implementation so the trainer links while the compile layer is
// written. The compile-layer engineer replaces this file entirely.
#include "trainer/compile/attention_kernel.h"

#include <cmath>
#include <stdexcept>

namespace trainer::compile {
namespace {
std::string g_mitigation = "none";
}
const std::vector<std::string>& mitigation_names() {
  static const std::vector<std::string> names{"none", "lock_first_call", "compile_lock_only", "global_lock", "rw_lock",
                                              "precompile", "isolate_thread", "isolate_process", "disable_check"};
  return names;
}
void set_attention_mitigation(const std::string& m) { g_mitigation = m; }
const std::string& attention_mitigation() { return g_mitigation; }
void precompile_attention(const std::function<void()>& run, bool) { run(); }
at::Tensor call_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask) {
  auto scores = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  scores = scores.masked_fill(mask.logical_not(), -1e9);
  return at::matmul(at::softmax(scores, -1), v);
}
AttentionStats attention_stats() { return {}; }
void reset_attention() {}
}  // namespace trainer::compile
