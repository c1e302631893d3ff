// Built and run only with RACELAB_TSAN=ON: ThreadSanitizer sees data races,
// not logic races.
//   - a plain-bool capture flag, free running (os) in a supervised worker ->
//     data_race, with TSan's top frames;
//   - the atomic flag -> no data_race ...
//   - ... yet the atomic flag still fails a controlled run (stuck_state):
//     the lost restore is a logic race TSan cannot see.
// Run against the test-local t_flag and, when it exists, the compile layer's
// real flag (compile/capture_state.{h,cpp}, LibTorch-free).
#include <gtest/gtest.h>

#include "engine/cell.h"
#include "engine/tsan_report.h"
#include "racelab/sync.h"
#include "racelab/workload.h"

#ifdef RACELAB_HAVE_CAPTURE_STATE
#include "compile/capture_state.h"

namespace {
namespace tc = racelab::compile;
tc::CaptureRuntime& runtime() {
  static tc::CaptureRuntime rt;
  return rt;
}
racelab::WorkloadRegistrar capture_reg{{
    "ts_capture_flag", "the compile layer's capture flag: tracers vs eager compiles",
    {{"flag_type", "plain"}, {"iterations", 3}}, {"none"}, false, [] { runtime().reset(); },
    [](const racelab::TrialInput& in) {
      tc::Variants v;
      v.set("flag_type", in.knobs.value("flag_type", "plain"));
      runtime().set_variants(v);
      int iterations = in.knobs.value("iterations", 3);
      std::vector<racelab::Thread> threads;
      for (int i = 0; i < in.threads; ++i) {
        threads.emplace_back([i, iterations] {
          for (int k = 0; k < iterations; ++k) {
            if (i % 2 == 0)
              tc::capture_scope(runtime(), nullptr, [] {});
            else
              tc::compilation_env(runtime(), [] {});
          }
        });
      }
      for (auto& t : threads) t.join();
      racelab::Observation obs;
      if (runtime().read_flag()) obs.stuck_state = "capture flag stuck true after all threads joined";
      return obs;
    }}};
}  // namespace
#endif

namespace {

racelab::CellSummary run(const std::string& workload, const std::string& strategy, nlohmann::json knobs,
                         int64_t trials, std::vector<racelab::TrialRecord>* recs, bool stop_at_first = false) {
  racelab::CellSpec c;
  c.workload = workload;
  c.strategy = strategy;
  c.threads = 4;
  c.knobs = std::move(knobs);
  c.max_trials = trials;
  c.trial_timeout_s = 60;
  c.stop_at_first_failure = stop_at_first;
  return racelab::run_cell(c, [&](const racelab::TrialRecord& r) { recs->push_back(r); });
}

void expect_tsan_sees_only_the_data_race(const std::string& workload, const nlohmann::json& plain,
                                         const nlohmann::json& atomic) {
  ASSERT_TRUE(racelab::built_with_tsan());
  std::vector<racelab::TrialRecord> recs;
  auto sum = run(workload, "os", plain, 5, &recs);
  EXPECT_EQ(sum.by_outcome["data_race"], 5) << "every trial of the plain flag races (reports are not deduplicated)";
  ASSERT_FALSE(recs.empty());
  EXPECT_NE(recs[0].detail.find("data race"), std::string::npos) << recs[0].detail;
  ASSERT_TRUE(recs[0].metrics.contains("tsan_reports"));
  EXPECT_FALSE(recs[0].metrics["tsan_reports"][0]["frames"].empty());
  std::printf("[measure] %s plain, os: %s\n", workload.c_str(), recs[0].detail.c_str());

  recs.clear();
  sum = run(workload, "os", atomic, 5, &recs);
  EXPECT_EQ(sum.by_outcome.count("data_race"), 0u);
  for (const auto& r : recs) EXPECT_FALSE(r.metrics.contains("tsan_reports")) << r.detail;

  recs.clear();
  sum = run(workload, "dfs:2", atomic, 3000, &recs, /*stop_at_first=*/true);
  EXPECT_EQ(sum.by_outcome["stuck_state"], 1) << "the atomic flag still loses a restore under control";
  EXPECT_EQ(sum.by_outcome.count("data_race"), 0u);
  std::printf("[measure] %s atomic, dfs:2: stuck_state at trial %lld, no data_race in any trial\n",
              workload.c_str(), static_cast<long long>(sum.first_failure_trial));
}

}  // namespace

TEST(Tsan, TestLocalFlag) {
  expect_tsan_sees_only_the_data_race("t_flag", {{"atomic", false}}, {{"atomic", true}});
}

#ifdef RACELAB_HAVE_CAPTURE_STATE
TEST(Tsan, CompileLayerCaptureFlag) {
  expect_tsan_sees_only_the_data_race("ts_capture_flag", {{"flag_type", "plain"}}, {{"flag_type", "atomic"}});
}
#endif
