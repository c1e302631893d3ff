// Compiled == eager (forward and backward), cache guards, recompiles, the
// recompile limit and the eager fallback, the bound entry check.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/jit/ir/ir.h>

#include "compile/attention_kernel.h"
#include "compile/attention_math.h"
#include "compile/compiled_function.h"

namespace racelab::compile {
namespace {

struct Qkv {
  at::Tensor q, k, v, mask;
};

Qkv make_qkv(int64_t L, int64_t D, bool grad, uint64_t seed = 1) {
  at::manual_seed(seed);
  Qkv x;
  x.q = at::randn({2, 3, L, D}).set_requires_grad(grad);
  x.k = at::randn({2, 3, L, D}).set_requires_grad(grad);
  x.v = at::randn({2, 3, L, D}).set_requires_grad(grad);
  x.mask = at::ones({L, L}, at::kBool).tril();
  return x;
}

TEST(CompiledFunction, ForwardAndBackwardMatchEagerOverRepeatedCalls) {
  CaptureRuntime rt;
  CompiledFunction fn("attn", masked_attention_fn, rt);
  // Several calls: the profiling executor profiles first, then optimises; every
  // one of them must give eager's values and gradients.
  for (int call = 0; call < 4; ++call) {
    Qkv a = make_qkv(7, 8, true, 10 + call);
    Qkv b{a.q.detach().clone().set_requires_grad(true), a.k.detach().clone().set_requires_grad(true),
          a.v.detach().clone().set_requires_grad(true), a.mask};
    at::Tensor compiled = fn({a.q, a.k, a.v, a.mask}).at(0);
    at::Tensor eager = eager_masked_attention(b.q, b.k, b.v, b.mask);
    ASSERT_TRUE(at::allclose(compiled, eager, 1e-5, 1e-6)) << "call " << call;
    at::Tensor w = at::randn_like(eager);
    (compiled * w).sum().backward();
    (eager * w).sum().backward();
    ASSERT_TRUE(a.q.grad().defined()) << "no gradient through the compiled graph, call " << call;
    EXPECT_TRUE(at::allclose(a.q.grad(), b.q.grad(), 1e-4, 1e-5)) << "dq call " << call;
    EXPECT_TRUE(at::allclose(a.k.grad(), b.k.grad(), 1e-4, 1e-5)) << "dk call " << call;
    EXPECT_TRUE(at::allclose(a.v.grad(), b.v.grad(), 1e-4, 1e-5)) << "dv call " << call;
  }
  EXPECT_EQ(fn.stats().compiles, 1);
  EXPECT_EQ(fn.stats().cache_hits, 3);
}

TEST(CompiledFunction, CapturesARealGraphAndOptimisesIt) {
  CaptureRuntime rt;
  CompiledFunction fn("attn", masked_attention_fn, rt);
  Qkv a = make_qkv(5, 4, false);
  fn({a.q, a.k, a.v, a.mask});
  auto graph = fn.graph_for({a.q, a.k, a.v, a.mask});
  ASSERT_NE(graph, nullptr);
  std::string ir = graph->toString();
  EXPECT_NE(ir.find("aten::matmul"), std::string::npos) << ir;
  EXPECT_NE(ir.find("aten::softmax"), std::string::npos) << ir;
  EXPECT_NE(ir.find("aten::masked_fill"), std::string::npos) << ir;
  EXPECT_EQ(fn.module_calls_for({a.q, a.k, a.v, a.mask}), std::vector<std::string>{"masked_attention"});
}

TEST(CompiledFunction, GuardsOnShapeDtypeAndRequiresGradAndRecompiles) {
  CaptureRuntime rt;
  CompiledFunction fn("attn", masked_attention_fn, rt);
  Qkv a = make_qkv(5, 4, false);
  fn({a.q, a.k, a.v, a.mask});
  fn({a.q, a.k, a.v, a.mask});
  EXPECT_EQ(fn.stats().compiles, 1);
  Qkv b = make_qkv(6, 4, false);  // new sequence length
  fn({b.q, b.k, b.v, b.mask});
  EXPECT_EQ(fn.stats().compiles, 2);
  Qkv c = make_qkv(5, 4, true);  // requires_grad differs
  fn({c.q, c.k, c.v, c.mask});
  EXPECT_EQ(fn.stats().compiles, 3);
  fn({a.q.to(at::kDouble), a.k.to(at::kDouble), a.v.to(at::kDouble), a.mask});  // dtype differs
  EXPECT_EQ(fn.stats().compiles, 4);
  EXPECT_FALSE(fn.will_compile({a.q, a.k, a.v, a.mask}));
  EXPECT_EQ(fn.stats().cache_entries, 4);
}

TEST(CompiledFunction, RecompileLimitFallsBackToTheEagerPathWhichWritesTheFlag) {
  CaptureRuntime rt;
  CompiledFunction fn("attn", masked_attention_fn, rt, /*recompile_limit=*/2);
  for (int64_t L = 3; L < 7; ++L) {
    Qkv a = make_qkv(L, 4, false);
    at::Tensor out = fn({a.q, a.k, a.v, a.mask}).at(0);
    EXPECT_TRUE(at::allclose(out, eager_masked_attention(a.q, a.k, a.v, a.mask), 1e-5, 1e-6));
  }
  EXPECT_EQ(fn.stats().compiles, 2);
  EXPECT_EQ(fn.stats().fallbacks, 2);
  EXPECT_EQ(rt.counters().eager_path_calls.load(), 2);  // the fallback went through the compilation env
  EXPECT_FALSE(rt.read_flag());
}

TEST(CompiledFunction, EntryCheckRaisesWhenAnotherCaptureHoldsTheFlag) {
  CaptureRuntime rt;
  CompiledFunction fn("attn", masked_attention_fn, rt);
  Qkv a = make_qkv(4, 4, false);
  fn({a.q, a.k, a.v, a.mask});
  rt.write_flag(true);  // as a capture in another thread would leave it
  try {
    fn({a.q, a.k, a.v, a.mask});
    FAIL() << "expected NestedCaptureError on a cache hit";
  } catch (const NestedCaptureError& e) {
    EXPECT_NE(std::string(e.what()).find("Detected that you are using FX to symbolically trace a dynamo-optimized"),
              std::string::npos);
  }
  EXPECT_EQ(fn.stats().errors, 1);
}

TEST(CompiledFunction, CheckIsBoundWhenTheWrapperIsMade) {
  CaptureRuntime rt;
  CompiledFunction before("attn", masked_attention_fn, rt);
  rt.set_error_on_nested_capture(false);  // the user's patch, after the wrapper exists
  CompiledFunction after("attn", masked_attention_fn, rt);
  Qkv a = make_qkv(4, 4, false);
  rt.write_flag(true);
  EXPECT_THROW(before({a.q, a.k, a.v, a.mask}), NestedCaptureError);  // keeps the old check
  at::Tensor out = after({a.q, a.k, a.v, a.mask}).at(0);             // silently eager
  EXPECT_TRUE(at::allclose(out, eager_masked_attention(a.q, a.k, a.v, a.mask)));
  EXPECT_EQ(after.stats().silent_fallbacks, 1);
  EXPECT_EQ(after.stats().compiles, 0);
}

TEST(AttentionKernel, CallAttentionIsCompiledAndCorrect) {
  set_attention_mitigation("none");
  Qkv a = make_qkv(6, 8, true);
  at::Tensor out = call_attention(a.q, a.k, a.v, a.mask);
  out.sum().backward();
  Qkv b = make_qkv(6, 8, true);
  eager_masked_attention(b.q, b.k, b.v, b.mask).sum().backward();
  EXPECT_TRUE(at::allclose(out, eager_masked_attention(b.q, b.k, b.v, b.mask), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(a.q.grad(), b.q.grad(), 1e-4, 1e-5));
  EXPECT_EQ(attention_stats().compiles, 1);
  EXPECT_THROW(set_attention_mitigation("bogus"), std::invalid_argument);
  reset_attention();
  EXPECT_EQ(attention_stats().compiles, 0);
}

}  // namespace
}  // namespace racelab::compile
