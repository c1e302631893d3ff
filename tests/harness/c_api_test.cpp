// racelab/racelab.h, the C ABI: its points reach the controller (names copied,
// so a temporary string is safe) and are real scheduling points for the engine.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "c_api_probe.h"
#include "engine/cell.h"
#include "racelab/controller.h"
#include "racelab/racelab.h"
#include "racelab/sync.h"
#include "racelab/workload.h"

namespace {

// Records every point; the calling thread counts as managed.
class RecordingController : public racelab::Controller {
 public:
  bool manages_current_thread() const override { return true; }
  void on_point(const char* name) override {
    names.push_back(name);
    objects.push_back(nullptr);
    accesses.push_back("-");
  }
  void on_access(const char* name, const void* object, racelab::Access access) override {
    names.push_back(name);
    objects.push_back(object);
    accesses.push_back(access == racelab::Access::kRead ? "read" : "write");
  }
  int on_thread_create() override { return 1; }
  void on_thread_start(int) override {}
  void on_thread_end(int) override {}
  void on_join(int) override {}
  void on_block(const void*, const char*) override {}
  void on_release(const void*) override {}
  void on_acquire(const void*, const char*) override {}
  std::vector<const char*> names;  // as passed: must stay valid
  std::vector<const void*> objects;
  std::vector<std::string> accesses;  // read, write, or - for a plain point
};

struct Attached {
  explicit Attached(racelab::Controller* c) { racelab::attach(c); }
  ~Attached() { racelab::detach(); }
};

// Two threads deposit through the C point; anything but the sum is a lost update.
racelab::Observation c_lost_update(const racelab::TrialInput& in) {
  std::vector<racelab::Thread> threads;
  for (int i = 0; i < in.threads; ++i) threads.emplace_back([] { c_probe_deposit(1); });
  for (auto& t : threads) t.join();
  racelab::Observation obs;
  if (c_probe_balance() != in.threads)
    obs.wrong_result = "balance " + std::to_string(c_probe_balance()) + " after " + std::to_string(in.threads) +
                       " deposits of 1";
  return obs;
}
racelab::WorkloadRegistrar c_lost_update_registrar{racelab::Workload{
    "t_c_lost_update", "A lost update in C, marked with racelab_point_access", nlohmann::json::object(), {"none"},
    false, [] { c_probe_reset(); }, &c_lost_update}};

racelab::CellSummary run(const std::string& strategy) {
  racelab::CellSpec c;
  c.workload = "t_c_lost_update";
  c.strategy = strategy;
  c.max_trials = 1000;
  c.supervised = false;
  return racelab::run_cell(c, [](const racelab::TrialRecord&) {});
}

}  // namespace

TEST(CApi, AbiVersionIsTheHeaders) { EXPECT_EQ(c_probe_abi_version(), RACELAB_C_ABI_VERSION); }

TEST(CApi, PointsReachTheControllerWithNamesThatOutliveTheCall) {
  RecordingController rec;
  {
    Attached attached(&rec);
    EXPECT_EQ(c_probe_is_controlled(), 1);
    c_probe_temporary_name();
    c_probe_temporary_name();
    c_probe_null_name();
  }
  EXPECT_EQ(c_probe_is_controlled(), 0);
  ASSERT_EQ(rec.names.size(), 3u);
  // The caller overwrote its buffer after each call: the controller's copy stays.
  EXPECT_STREQ(rec.names[0], "c.temporary");
  EXPECT_EQ(rec.names[0], rec.names[1]) << "one copy per distinct name";
  EXPECT_STREQ(rec.names[2], "racelab_point");
}

TEST(CApi, ObjectAndAccessReachTheControllerWhenBothAreKnown) {
  RecordingController rec;
  const void* balance = nullptr;
  {
    Attached attached(&rec);
    balance = c_probe_accesses();
  }
  ASSERT_EQ(rec.names.size(), 4u);
  EXPECT_STREQ(rec.names[0], "c.read");
  EXPECT_EQ(rec.objects[0], balance);
  EXPECT_EQ(rec.accesses[0], "read");
  EXPECT_EQ(rec.objects[1], balance);
  EXPECT_EQ(rec.accesses[1], "write");
  // Unknown access, or no object: a plain point, dependent on everything.
  EXPECT_EQ(rec.accesses[2], "-");
  EXPECT_EQ(rec.objects[2], nullptr);
  EXPECT_EQ(rec.accesses[3], "-");
}

TEST(CApi, UncontrolledPointsReachNoOne) {
  RecordingController rec;
  { Attached attached(&rec); }
  c_probe_temporary_name();
  EXPECT_TRUE(rec.names.empty());
}

TEST(CApi, ThePointIsWhereTheEngineInterleaves) {
  // Without a preemption the deposits run one after the other and add up.
  auto serial = run("dfs:0");
  EXPECT_TRUE(serial.exhausted);
  EXPECT_EQ(serial.failures, 0);
  // One preemption, at the C point between read and write, loses an update;
  // nothing else separates the read from the write.
  auto one = run("dfs:1");
  EXPECT_TRUE(one.exhausted);
  EXPECT_GT(one.by_outcome["wrong_result"], 0);
}
