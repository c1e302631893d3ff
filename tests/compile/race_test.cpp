// Each race of docs/ARCHITECTURE.md, forced deterministically with latches at the
// interleaving points (ScriptController; no sleeps), then every mitigation's
// verdict on every race under the same forced interleavings, printed as a table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "script_controller.h"
#include "compile/micro_workloads.h"
#include "compile/oracles.h"
#include "compile/point_names.h"
#include "compile/mitigation/mitigation.h"

namespace racelab::compile {
namespace {

using racelab_test::ScriptController;
using Steps = std::vector<ScriptController::Step>;
namespace P = racelab::compile::points;

// The forced interleaving of each race (thread 1 = worker 1, thread 2 = worker 2).
const std::map<std::string, Steps>& schedules() {
  static const std::map<std::string, Steps> s{
      // 2 has compiled and is about to call again (a cache hit); 1 is mid-capture.
      {"direct_leak", {{2, P::kCompiledEnter, 2}, {1, P::kCaptureRestoreFlag}, {2, ""}, {1, ""}}},
      // 1 mid-capture; 2's eager path saves true, clears, waits for the lock; 1 restores false.
      {"stuck_true", {{1, P::kCaptureRestoreFlag}, {2, P::kCompileLock}, {1, ""}, {2, ""}}},
      // 1's user trace is about to check; 2's eager path has cleared the flag.
      {"transient_false", {{1, P::kEntryCheck}, {2, P::kCompileLock}, {1, ""}, {2, ""}}},
      // 1 mid-capture (patch installed); 2 makes a module call and starts its own trace.
      {"module_patch", {{1, P::kCaptureTrace}, {2, P::kCaptureTrace}, {1, ""}, {2, ""}}},
      // 1 recompiles for a new shape mid-run; 2 hits the cache.
      {"recompile_after_warmup", {{1, P::kCaptureRestoreFlag}, {2, ""}, {1, ""}}},
      // 1 user-traces (no compile lock); 2 hits the cache.
      {"user_trace_outside_lock", {{1, P::kCaptureRestoreFlag}, {2, ""}, {1, ""}}},
      // Both copy the cache table; 1 publishes, then 2 publishes over it.
      {"unsync_cache", {{1, P::kCacheInsert}, {2, P::kCacheInsert}, {1, ""}, {2, ""}}},
      // 1 saved and flipped the setting; 2 saves the flipped value; 1 restores, 2 restores.
      {"jit_setting_restore", {{1, P::kJitCompile}, {2, P::kJitCompile}, {1, ""}, {2, ""}}},
  };
  return s;
}

struct Forced {
  MicroResult result;
  std::vector<std::string> skipped;
};

Forced force(const std::string& workload, const std::string& mitigation,
             const std::function<void(MicroConfig&)>& tweak = nullptr, const Steps* script = nullptr) {
  reset_for_trial();
  MicroConfig c = micro_defaults(workload);
  c.mitigation = mitigation;
  if (tweak) tweak(c);
  ScriptController ctl(script != nullptr ? *script : schedules().at(workload));
  Forced f;
  ctl.run([&] { f.result = run_micro(c); });
  f.skipped = ctl.skipped();
  reset_for_trial();
  return f;
}

std::string verdict(const MicroResult& r) {
  std::string v;
  auto add = [&](const char* c) { v += (v.empty() ? "" : "+") + std::string(c); };
  if (!r.errors.empty()) add("error");
  if (!r.stuck_state.empty()) add("stuck_state");
  if (!r.wrong_result.empty()) add("wrong_result");
  if (r.silent_fallbacks > 0) add("silent_fallback");
  return v.empty() ? "holds" : v;
}

TEST(Races, DirectLeakRaisesOnACacheHit) {
  Forced f = force("direct_leak", "none");
  ASSERT_EQ(f.result.errors.size(), 1u) << verdict(f.result);
  EXPECT_NE(f.result.errors[0].find("worker 2: Detected that you are using FX to symbolically trace"),
            std::string::npos)
      << f.result.errors[0];
  EXPECT_TRUE(f.result.stuck_state.empty()) << f.result.stuck_state;
  EXPECT_TRUE(f.skipped.empty());
}

TEST(Races, AGlobalLockPreventsTheForcedDirectLeakInterleaving) {
  // Worker 2 blocks on the mitigation lock, so the step that would run it
  // while worker 1 is mid-capture is dropped by the controller.
  Forced f = force("direct_leak", "global_lock");
  EXPECT_EQ(verdict(f.result), "holds");
  EXPECT_FALSE(f.skipped.empty());
}

TEST(Races, LostRestoreLeavesTheFlagStuckTrue) {
  Forced f = force("stuck_true", "none");
  EXPECT_TRUE(f.result.errors.empty());
  EXPECT_NE(f.result.stuck_state.find("capture flag is true after the trial"), std::string::npos)
      << f.result.stuck_state;
}

TEST(Races, StuckTruePoisonsEveryLaterCallEvenSingleThreaded) {
  reset_for_trial();
  MicroConfig c = micro_defaults("stuck_true");
  ScriptController ctl(schedules().at("stuck_true"));
  ctl.run([&] { (void)run_micro(c); });
  // No reset: the process is poisoned. A fresh single-threaded trial fails at once.
  ASSERT_TRUE(CaptureRuntime::process().read_flag());
  CaptureRuntime& rt = CaptureRuntime::process();
  EntryCheck check = rt.make_entry_check();
  EXPECT_THROW(check.run("after_the_race"), NestedCaptureError);
  reset_for_trial();
  EXPECT_FALSE(CaptureRuntime::process().read_flag());
}

TEST(Races, TransientFalseHidesAGenuineNestedCapture) {
  Forced f = force("transient_false", "none");
  EXPECT_NE(f.result.wrong_result.find("genuine nested capture was not detected"), std::string::npos)
      << verdict(f.result) << " " << f.result.wrong_result;
  std::printf("transient_false under none: %s\n", f.result.wrong_result.c_str());
}

TEST(Races, TransientFalseWithoutTheRaceIsDiagnosed) {
  // Control: worker 1 alone (no eager path) gets the NestedCaptureError it should.
  reset_for_trial();
  MicroConfig c = micro_defaults("transient_false");
  c.threads = 1;
  ScriptController ctl({});
  MicroResult r;
  ctl.run([&] { r = run_micro(c); });
  EXPECT_EQ(verdict(r), "holds") << r.wrong_result;
  reset_for_trial();
}

TEST(Races, GlobalModuleCallPatchRecordsAnotherThreadAndIsRevertedByTheWrongThread) {
  Forced f = force("module_patch", "none");
  EXPECT_NE(f.result.wrong_result.find("worker2.proj"), std::string::npos) << f.result.wrong_result;
  EXPECT_NE(f.result.stuck_state.find("module-call patch is still installed"), std::string::npos)
      << f.result.stuck_state;
}

TEST(Races, RecompileAfterWarmupLeaksAgain) {
  Forced f = force("recompile_after_warmup", "none");
  ASSERT_EQ(f.result.errors.size(), 1u) << verdict(f.result);
  EXPECT_NE(f.result.errors[0].find("worker 2: Detected"), std::string::npos) << f.result.errors[0];
}

TEST(Races, UserTraceOutsideTheLockBeatsAGlobalLock) {
  Forced f = force("user_trace_outside_lock", "global_lock");
  ASSERT_EQ(f.result.errors.size(), 1u) << verdict(f.result);
  EXPECT_NE(f.result.errors[0].find("Detected"), std::string::npos);
}

TEST(Races, UnsynchronisedCacheLosesAnEntry) {
  Forced f = force("unsync_cache", "none");
  EXPECT_NE(f.result.wrong_result.find("lost 1 compiled entry"), std::string::npos) << f.result.wrong_result;
  Forced sync = force("unsync_cache", "none", [](MicroConfig& c) { c.variants.cache = CacheSync::kSynchronised; });
  EXPECT_EQ(verdict(sync.result), "holds") << sync.result.wrong_result;
}

TEST(Races, LibTorchProfilingModeLostRestoreEndsWrong) {
  const bool before = JitSettings::read().profiling_mode;
  Forced f = force("jit_setting_restore", "none", [](MicroConfig& c) { c.setting = "profiling_mode"; });
  EXPECT_NE(f.result.stuck_state.find("getProfilingMode()"), std::string::npos) << f.result.stuck_state;
  EXPECT_EQ(JitSettings::read().profiling_mode, before);  // reset_for_trial put it back
}

TEST(Races, LibTorchTexprFuserLostRestoreEndsWrong) {
  Forced f = force("jit_setting_restore", "none", [](MicroConfig& c) { c.setting = "texpr_fuser"; });
  EXPECT_NE(f.result.stuck_state.find("tensorExprFuserEnabled()"), std::string::npos) << f.result.stuck_state;
}

TEST(Races, LibTorchThreadLocalExecutorOptimizeNeverEndsWrong) {
  Forced f = force("jit_setting_restore", "none", [](MicroConfig& c) { c.setting = "executor_optimize"; });
  EXPECT_EQ(verdict(f.result), "holds") << f.result.stuck_state;
}

// A thread-local flag does not isolate the module-call patch: two captures
// that no lock orders against each other -- an eager path's fw/bw trace with
// gradients, a user's trace -- beside a compile interleave their save and
// restore of the process-wide patch and leave it installed (real torch's
// isolate_thread failures on stuck_true and user_trace_outside_lock).
TEST(Races, IsolateThreadLeavesThePatchWhenTheEagerPathTracesWithGradients) {
  // Worker 2's eager path: its compile (capture 1, under the compile lock),
  // then its fw/bw trace (capture 2, outside the lock) installs its patch;
  // worker 1 compiles and installs over it; worker 2 reverts to nothing;
  // worker 1 reverts to worker 2's patch.
  const Steps script{{2, P::kCaptureTrace, 2}, {1, P::kCaptureTrace}, {2, P::kCaptureRestoreFlag, 2}, {1, ""}, {2, ""}};
  Forced f = force("stuck_true", "isolate_thread", [](MicroConfig& c) { c.grad = true; }, &script);
  EXPECT_TRUE(f.skipped.empty());
  EXPECT_TRUE(f.result.errors.empty()) << f.result.errors.front();
  EXPECT_NE(f.result.stuck_state.find("module-call patch is still installed"), std::string::npos)
      << verdict(f.result) << " " << f.result.stuck_state;
  EXPECT_EQ(f.result.stuck_state.find("capture flag"), std::string::npos) << f.result.stuck_state;
}

TEST(Races, IsolateThreadLeavesThePatchWhenAUserTraceMeetsACompile) {
  // Worker 1's user trace installs its patch; worker 2's first call compiles
  // and installs over it; worker 1 reverts to nothing; worker 2 reverts to
  // worker 1's patch.
  const Steps script{{1, P::kCaptureTrace}, {2, P::kCaptureTrace}, {1, P::kCaptureRestoreFlag}, {2, ""}, {1, ""}};
  Forced f = force("user_trace_outside_lock", "isolate_thread", nullptr, &script);
  EXPECT_TRUE(f.skipped.empty());
  EXPECT_TRUE(f.result.errors.empty()) << f.result.errors.front();
  EXPECT_NE(f.result.stuck_state.find("module-call patch is still installed"), std::string::npos)
      << verdict(f.result) << " " << f.result.stuck_state;
}

TEST(Variants, ThreadLocalFlagRemovesDirectLeakAndStuckTrue) {
  auto tl = [](MicroConfig& c) { c.variants.flag_scope = FlagScope::kThreadLocal; };
  EXPECT_EQ(verdict(force("direct_leak", "none", tl).result), "holds");
  EXPECT_EQ(verdict(force("stuck_true", "none", tl).result), "holds");
  EXPECT_EQ(verdict(force("transient_false", "none", tl).result), "holds");
  // The module-call patch stays global: that race survives the thread-local flag.
  EXPECT_NE(verdict(force("module_patch", "none", tl).result), "holds");
}

TEST(Variants, CheckInsideTheLockRemovesTheDirectLeakFromCompiles) {
  auto inside = [](MicroConfig& c) { c.variants.check = CheckPlace::kInsideLock; };
  EXPECT_EQ(verdict(force("direct_leak", "none", inside).result), "holds");
  // ...but not from a user-level trace, which holds no lock.
  EXPECT_NE(verdict(force("user_trace_outside_lock", "none", inside).result), "holds");
}

TEST(Variants, EagerPathSettingTheFlagAfterTheLockRemovesStuckTrue) {
  auto after = [](MicroConfig& c) { c.variants.eager_sets_flag = EagerOrder::kAfterLock; };
  EXPECT_EQ(verdict(force("stuck_true", "none", after).result), "holds");
}

// Expected verdicts under the forced interleavings (the mitigation table of docs/ARCHITECTURE.md, and what
// each mitigation can and cannot cover).
const std::map<std::string, std::map<std::string, std::string>>& expected() {
  static const std::map<std::string, std::map<std::string, std::string>> e{
      {"direct_leak",
       {{"none", "error"}, {"lock_first_call", "error"}, {"compile_lock_only", "error"}, {"global_lock", "holds"},
        {"rw_lock", "holds"}, {"precompile", "holds"}, {"isolate_thread", "holds"}, {"isolate_process", "holds"},
        {"disable_check", "silent_fallback"},
        {"patch_check", "holds"}}},
      {"stuck_true",
       {{"none", "stuck_state"}, {"lock_first_call", "holds"}, {"compile_lock_only", "holds"},
        {"global_lock", "holds"}, {"rw_lock", "holds"}, {"precompile", "holds"}, {"isolate_thread", "holds"},
        {"isolate_process", "holds"}, {"disable_check", "stuck_state"},
        {"patch_check", "stuck_state"}}},
      {"transient_false",
       // The eager path's lost restore also leaves the flag stuck true here.
       {{"none", "stuck_state+wrong_result"}, {"lock_first_call", "holds"}, {"compile_lock_only", "holds"},
        {"global_lock", "holds"}, {"rw_lock", "holds"}, {"precompile", "stuck_state+wrong_result"},
        {"isolate_thread", "holds"}, {"isolate_process", "holds"}, {"disable_check", "stuck_state+wrong_result"},
        {"patch_check", "stuck_state+wrong_result"}}},
      {"module_patch",
       {{"none", "stuck_state+wrong_result"}, {"lock_first_call", "stuck_state+wrong_result"},
        {"compile_lock_only", "stuck_state+wrong_result"}, {"global_lock", "stuck_state+wrong_result"},
        {"rw_lock", "stuck_state+wrong_result"}, {"precompile", "holds"},
        {"isolate_thread", "stuck_state+wrong_result"}, {"isolate_process", "holds"},
        {"disable_check", "stuck_state+wrong_result"},
        {"patch_check", "stuck_state+wrong_result"}}},
      {"recompile_after_warmup",
       {{"none", "error"}, {"lock_first_call", "error"}, {"compile_lock_only", "error"}, {"global_lock", "holds"},
        {"rw_lock", "holds"}, {"precompile", "error"}, {"isolate_thread", "holds"}, {"isolate_process", "holds"},
        {"disable_check", "silent_fallback"},
        {"patch_check", "holds"}}},
      {"user_trace_outside_lock",
       {{"none", "error"}, {"lock_first_call", "error"}, {"compile_lock_only", "error"}, {"global_lock", "error"},
        {"rw_lock", "error"}, {"precompile", "error"}, {"isolate_thread", "holds"}, {"isolate_process", "holds"},
        {"disable_check", "silent_fallback"},
        {"patch_check", "holds"}}},
      {"unsync_cache",
       {{"none", "wrong_result"}, {"lock_first_call", "holds"}, {"compile_lock_only", "holds"},
        {"global_lock", "holds"}, {"rw_lock", "holds"}, {"precompile", "holds"}, {"isolate_thread", "wrong_result"},
        {"isolate_process", "holds"}, {"disable_check", "wrong_result"},
        {"patch_check", "wrong_result"}}},
      {"jit_setting_restore",
       {{"none", "stuck_state"}, {"lock_first_call", "holds"}, {"compile_lock_only", "holds"},
        {"global_lock", "holds"}, {"rw_lock", "holds"}, {"precompile", "stuck_state"},
        {"isolate_thread", "stuck_state"}, {"disable_check", "stuck_state"},
        {"patch_check", "stuck_state"}}},
  };
  return e;
}

TEST(Mitigations, VerdictTableUnderForcedInterleavings) {
  const auto& names = mitigation::names();
  std::string table = "| race | " ;
  for (const auto& m : names) table += m + " | ";
  table += "\n|---|";
  for (size_t i = 0; i < names.size(); ++i) table += "---|";
  table += "\n";
  int mismatches = 0;
  for (const auto& [race, row] : expected()) {
    table += "| " + race + " | ";
    const auto accepted = micro_workload_mitigations(race);
    for (const auto& m : names) {
      if (std::find(accepted.begin(), accepted.end(), m) == accepted.end()) {
        table += "n/a | ";
        continue;
      }
      const std::string got = verdict(force(race, m).result);
      // module_shim must fail exactly where none fails, with the same classes:
      // the wrappers read the flag through their check's __globals__.
      const std::string want = m == "module_shim" ? row.at("none") : row.at(m);
      if (got != want) {
        ++mismatches;
        ADD_FAILURE() << race << " x " << m << ": got " << got << ", expected " << want;
      }
      table += (got == "holds" ? "holds" : "FAILS (" + got + ")") + " | ";
    }
    table += "\n";
  }
  std::printf("\nMitigation verdicts under the forced interleavings:\n%s\n", table.c_str());
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace racelab::compile
