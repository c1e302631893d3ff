// compile/attention_kernel.h -- the compiled attention the trainer calls.
//
// This is the seam between the drafter trainer and the compile layer: the
// trainer's masked_attention() builds its block mask and calls call_attention();
// the compile layer runs it through the active mitigation and a CompiledFunction
// (trace, cache per signature, recompile, eager fallback), exactly where PyTorch
// users have torch.compile(flex_attention).
#ifndef RACELAB_COMPILE_ATTENTION_KERNEL_H_
#define RACELAB_COMPILE_ATTENTION_KERNEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace racelab::compile {

// The names racelab accepts for --mitigation (docs/ARCHITECTURE.md, mitigations), in display order.
const std::vector<std::string>& mitigation_names();

// Process-wide choice of mitigation for every attention call. Call before worker
// threads start. Throws std::invalid_argument naming the valid choices.
// "isolate_process" behaves as "none" inside one process: the pipeline provides
// the isolation by running one process per drafter.
void set_attention_mitigation(const std::string& mitigation);
const std::string& attention_mitigation();

// For the "precompile" mitigation: runs `run_every_declared_shape` (which calls
// masked_attention once per shape the run will use) before threads start; with
// `freeze`, a shape not seen during warm-up later raises instead of compiling.
void precompile_attention(const std::function<void()>& run_every_declared_shape, bool freeze);

// q: [B, H, Lq, D], k/v: [B, H, Lk, D], mask: [Lq, Lk] bool (true = may attend).
at::Tensor call_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask);

struct AttentionStats {
  int64_t calls = 0;
  int64_t compiles = 0;      // captures (first compile and recompiles)
  int64_t cache_hits = 0;
  int64_t fallbacks = 0;     // calls that ran the eager path
  int64_t errors = 0;        // NestedCaptureError raised
  double compile_seconds = 0;
};
AttentionStats attention_stats();

// Fresh compile state (cache, counters, capture flag); mitigation unchanged.
void reset_attention();

}  // namespace racelab::compile

#endif  // RACELAB_COMPILE_ATTENTION_KERNEL_H_
