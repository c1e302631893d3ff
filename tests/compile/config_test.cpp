// Variants and mitigations by name (clear errors), precompile/freeze, the
// global-state oracles and reset_for_trial(), and the TE-fused function run
// single-threaded in a forked child (the multi-threaded race crashes by design
// and is exercised only by the harness in its worker process).
#include <gtest/gtest.h>

#include <cstdlib>

#include <ATen/ATen.h>

#include "compile/attention_kernel.h"
#include "compile/attention_math.h"
#include "compile/compiled_function.h"
#include "compile/jit_races.h"
#include "compile/micro_workloads.h"
#include "compile/oracles.h"
#include "compile/mitigation/mitigation.h"

namespace racelab::compile {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Config, VariantsParseByNameWithClearErrors) {
  Variants v;
  v.set("flag_scope", "thread_local");
  v.set("flag_type", "atomic");
  v.set("check", "inside_lock");
  v.set("eager_sets_flag", "after_lock");
  v.set("cache", "unsynchronised");
  v.set("patch_scope", "thread_local");
  for (const auto& f : Variants::fields()) EXPECT_NE(v.get(f), Variants().get(f)) << f;
  EXPECT_EQ(error_of([&] { v.set("flag_scope", "per_process"); }),
            "compile variant 'flag_scope': got 'per_process', expected global | thread_local");
  EXPECT_NE(error_of([&] { v.set("flag_colour", "x"); }).find("unknown compile variant 'flag_colour'"),
            std::string::npos);
}

TEST(Config, MitigationsParseByNameWithClearErrors) {
  for (const auto& n : mitigation::names()) EXPECT_EQ(mitigation::name(mitigation::parse(n)), n);
  EXPECT_EQ(mitigation::names().size(), 11u);
  // The four fixes people try first, as the report groups them.
  std::vector<std::string> first;
  for (const auto& n : mitigation::names())
    if (std::string(mitigation::group(mitigation::parse(n))) == mitigation::kTriedFirst) first.push_back(n);
  EXPECT_EQ(first, (std::vector<std::string>{"lock_first_call", "module_shim", "patch_check", "disable_check"}));
  EXPECT_NE(error_of([] { mitigation::parse("lock_everything"); })
                .find("unknown mitigation 'lock_everything', expected one of: none, lock_first_call"),
            std::string::npos);
  EXPECT_THROW(set_attention_mitigation("nope"), std::invalid_argument);
  MicroConfig c = micro_defaults("te_fuser_crash");
  c.mitigation = "rw_lock";
  EXPECT_NE(error_of([&] { run_micro(c); }).find("does not accept mitigation 'rw_lock'"), std::string::npos);
  EXPECT_THROW(micro_defaults("no_such_workload"), std::invalid_argument);
}

TEST(Config, ConfigureRuntimeAppliesIsolateThreadAndDisableCheck) {
  CaptureRuntime rt;
  mitigation::configure_runtime(mitigation::Mitigation::kIsolateThread, rt);
  EXPECT_EQ(rt.variants().flag_scope, FlagScope::kThreadLocal);
  EXPECT_TRUE(rt.error_on_nested_capture());
  mitigation::configure_runtime(mitigation::Mitigation::kDisableCheck, rt);
  EXPECT_FALSE(rt.error_on_nested_capture());
}

// A trial's mitigation must not inherit the previous trial's variants: after
// isolate_thread (thread-local flag), disable_check runs on the global flag again.
TEST(Config, AttentionMitigationStartsFromUpstreamDefaults) {
  using namespace racelab::compile;
  set_attention_mitigation("isolate_thread");
  EXPECT_EQ(CaptureRuntime::process().variants().flag_scope, FlagScope::kThreadLocal);
  set_attention_mitigation("disable_check");
  EXPECT_EQ(CaptureRuntime::process().variants().flag_scope, FlagScope::kGlobal);
  EXPECT_FALSE(CaptureRuntime::process().error_on_nested_capture());
  set_attention_mitigation("none");
  EXPECT_TRUE(CaptureRuntime::process().error_on_nested_capture());
}

// module_shim: a wrapper binds the flag's module when it is made (its check's
// __globals__). A shim installed afterwards is what a lookup by name finds, but
// the existing wrapper still reads the real flag and raises; only a wrapper
// made after the shim reads the shim.
TEST(ModuleShim, WrappersMadeBeforeTheShimKeepReadingTheRealFlag) {
  CaptureRuntime rt;
  CompiledFunction before("masked_attention", masked_attention_fn, rt);
  mitigation::apply_after_wrappers(mitigation::Mitigation::kModuleShim, rt);
  EXPECT_NE(rt.installed_module().get(), &rt.real_module());
  EXPECT_FALSE(rt.installed_module()->flag());
  EXPECT_EQ(&before.entry_check().globals(), &rt.real_module());
  CompiledFunction after("masked_attention", masked_attention_fn, rt);
  EXPECT_EQ(&after.entry_check().globals(), rt.installed_module().get());

  auto a = std::vector<at::Tensor>{at::randn({1, 2, 4, 4}), at::randn({1, 2, 4, 4}), at::randn({1, 2, 4, 4}),
                                   at::ones({4, 4}, at::kBool)};
  rt.write_flag(true);  // as a capture in another thread would
  EXPECT_NE(error_of([&] { before(a); }).find("Detected that you are using FX to symbolically trace"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { after(a); }), "");
  rt.reset();  // the real module again
  EXPECT_EQ(rt.installed_module().get(), &rt.real_module());
}

// patch_check: the predicate is looked up at every call, so patching it after
// the wrappers exist silences every wrapper -- no error, no fallback: the call
// runs compiled while another capture holds the flag.
TEST(PatchCheck, ThePatchedPredicateSilencesExistingWrappers) {
  CaptureRuntime rt;
  CompiledFunction fn("masked_attention", masked_attention_fn, rt);
  auto a = std::vector<at::Tensor>{at::randn({1, 2, 4, 4}), at::randn({1, 2, 4, 4}), at::randn({1, 2, 4, 4}),
                                   at::ones({4, 4}, at::kBool)};
  rt.write_flag(true);
  EXPECT_THROW(fn(a), NestedCaptureError);
  mitigation::apply_after_wrappers(mitigation::Mitigation::kPatchCheck, rt);
  EXPECT_TRUE(rt.predicate_patched());
  std::vector<at::Tensor> out;
  EXPECT_EQ(error_of([&] { out = fn(a); }), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::allclose(out[0], eager_masked_attention(a[0], a[1], a[2], a[3]), 1e-4, 1e-5));
  EXPECT_EQ(rt.counters().silent_fallbacks, 0);
  EXPECT_TRUE(rt.read_flag());  // the flag itself is untouched: the lost restore stays visible
  rt.reset();
  EXPECT_FALSE(rt.predicate_patched());
}

// The trainer's attention applies both after its wrapper is made.
TEST(Config, AttentionMitigationAppliesTheShimAndThePatchAfterTheWrapper) {
  set_attention_mitigation("module_shim");
  EXPECT_NE(CaptureRuntime::process().installed_module().get(), &CaptureRuntime::process().real_module());
  EXPECT_FALSE(CaptureRuntime::process().predicate_patched());
  set_attention_mitigation("patch_check");
  EXPECT_EQ(CaptureRuntime::process().installed_module().get(), &CaptureRuntime::process().real_module());
  EXPECT_TRUE(CaptureRuntime::process().predicate_patched());
  set_attention_mitigation("none");
  EXPECT_FALSE(CaptureRuntime::process().predicate_patched());
}

TEST(Precompile, FreezeTurnsANewShapeIntoAnError) {
  set_attention_mitigation("precompile");
  auto qkv = [](int64_t L) {
    return std::vector<at::Tensor>{at::randn({1, 2, L, 4}), at::randn({1, 2, L, 4}), at::randn({1, 2, L, 4}),
                                   at::ones({L, L}, at::kBool)};
  };
  precompile_attention(
      [&] {
        for (int64_t L : {4, 6}) {
          auto a = qkv(L);
          call_attention(a[0], a[1], a[2], a[3]);
        }
      },
      /*freeze=*/true);
  EXPECT_EQ(attention_stats().compiles, 2);
  auto ok = qkv(6);
  EXPECT_NO_THROW(call_attention(ok[0], ok[1], ok[2], ok[3]));
  auto fresh = qkv(5);
  EXPECT_THROW(call_attention(fresh[0], fresh[1], fresh[2], fresh[3]), ShapeNotPrecompiledError);
  set_attention_mitigation("none");
}

TEST(Oracles, SnapshotSeesAStuckFlagAndPatchAndResetClearsThem) {
  reset_for_trial();
  const GlobalSnapshot initial = GlobalSnapshot::take();
  CaptureRuntime& rt = CaptureRuntime::process();
  rt.write_flag(true);
  rt.install_patch(std::make_shared<ModuleCallRecorder>("leaked"));
  std::string d = GlobalSnapshot::take().diff(initial);
  EXPECT_NE(d.find("capture flag is true after the trial"), std::string::npos) << d;
  EXPECT_NE(d.find("module-call patch is still installed"), std::string::npos) << d;
  reset_for_trial();
  EXPECT_EQ(GlobalSnapshot::take().diff(initial), "");
}

TEST(Oracles, ResetForTrialRestoresLibTorchSettings) {
  reset_for_trial();
  const JitSettings initial = JitSettings::read();
  write_jit_setting(JitSetting::kProfilingMode, !initial.profiling_mode);
  write_jit_setting(JitSetting::kTexprFuser, !initial.texpr_fuser);
  EXPECT_NE(JitSettings::read().diff(initial).find("getProfilingMode()"), std::string::npos);
  reset_for_trial();
  EXPECT_EQ(JitSettings::read().diff(initial), "");
}

TEST(Oracles, SilentFallbackIsCountedUnderDisableCheck) {
  reset_for_trial();
  set_attention_mitigation("disable_check");
  auto a = std::vector<at::Tensor>{at::randn({1, 2, 4, 4}), at::randn({1, 2, 4, 4}), at::randn({1, 2, 4, 4}),
                                   at::ones({4, 4}, at::kBool)};
  CaptureRuntime::process().write_flag(true);  // as a capture in another thread would
  at::Tensor out = call_attention(a[0], a[1], a[2], a[3]);
  EXPECT_TRUE(at::allclose(out, eager_masked_attention(a[0], a[1], a[2], a[3])));
  EXPECT_EQ(attention_stats().fallbacks, 1);
  EXPECT_EQ(attention_stats().compiles, 0);
  set_attention_mitigation("none");
  reset_for_trial();
}

TEST(JitRaces, TeFusedFunctionIsCorrectSingleThreadedInAChild) {
  // Forked (death-test style) so the TE settings and any fuser state never
  // touch this process.
  EXPECT_EXIT(
      {
        MicroConfig c = micro_defaults("te_fuser_crash");
        c.threads = 1;
        c.iterations = 20;
        MicroResult r = run_micro(c);
        std::exit(r.errors.empty() && r.wrong_result.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// Runs the shared TE function a few times on this thread; true when the graph
// executed last holds a TensorExpr group.
bool te_function_fuses() {
  enable_te_interpreter();
  TeFusedFunction f;
  const at::Tensor x = at::randn({64});
  const at::Tensor y = at::randn({64});
  for (int i = 0; i < 5; ++i) (void)f(x, y);
  return last_optimized_graph_text().find("prim::TensorExprGroup") != std::string::npos;
}

TEST(JitRaces, TheTensorExprFuserReallyFusesTheSharedFunction) {
  // The finding "no crash on this LibTorch" means something only if the fused
  // path runs: after the profiling runs, the executed graph holds a TE group.
  // In a child, so the TE settings never touch this process.
  EXPECT_EXIT(std::exit(te_function_fuses() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace racelab::compile
