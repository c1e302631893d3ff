// A bad knob value is a configuration error, never an outcome of the system
// under test (issue 14, items 1 and 2): `run -k` exits 2 before any trial,
// `validate` rejects every value `ci` would (exit 3, naming file and field),
// and `ci` never reaches a trial with one.
#include <gtest/gtest.h>

#include <string>

#include "racelab_cli.h"

namespace {

using racelab::testing::racelab;
using racelab::testing::ScratchDir;

// A one-cell scenario of direct_leak whose expectation for `global_lock` is
// the `error` the bad knob used to cause: only a config error stops it passing.
std::string scenario(const std::string& knobs, const std::string& strategy = "\"random\"",
                     const std::string& expectation = R"({"reproduces_within": 2, "outcome": "error"})") {
  return R"({"format": "racelab-scenario", "version": 1, "name": "bad_knob", "description": "d",
    "workload": "direct_leak", "knobs": )" +
         knobs + R"(, "threads": [2], "strategies": [{"strategy": )" + strategy + R"(, "trials": 2}],
    "mitigations": ["global_lock"], "expectations": {"global_lock": )" +
         expectation + "}}";
}

TEST(Knobs, ABadVariantOnTheCommandLineIsAUsageErrorNotARace) {
  const auto r = racelab("run direct_leak -m global_lock -k flag_scope=bogus -n 2 --in-process");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("knob 'flag_scope': found \"bogus\", expected global | thread_local"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("trials in"), std::string::npos) << "no trial may run:\n" << r.output;
}

TEST(Knobs, OutOfRangeNumbersOnTheCommandLineAreUsageErrors) {
  for (const char* knob : {"iterations=-1", "heads=0", "iterations=1.5", "seq=1099511627776", "iterations=\\\"x\\\""}) {
    const auto r = racelab(std::string("run direct_leak -n 1 --in-process -k ") + knob);
    EXPECT_EQ(r.code, 2) << knob << ":\n" << r.output;
    EXPECT_NE(r.output.find("knob '"), std::string::npos) << knob << ":\n" << r.output;
  }
}

TEST(Knobs, ValidateRejectsWhatCiWouldRejectNamingFileAndField) {
  ScratchDir dir;
  struct Case {
    std::string knobs, field;
  } cases[] = {{R"({"flag_scope": "bogus"})", "$.knobs.flag_scope"},
               {R"({"iterations": "x"})", "$.knobs.iterations"},
               {R"({"iterations": -1})", "$.knobs.iterations"},
               {R"({"heads": 0})", "$.knobs.heads"},
               {R"({"setting": "nope"})", "$.knobs.setting"}};
  for (const auto& c : cases) {
    const std::string file = dir.write("s.json", scenario(c.knobs));
    for (const char* cmd : {"validate", "ci"}) {
      const std::string out = std::string(cmd) == "ci" ? " --out " + dir.file("out") : "";
      const auto r = racelab(std::string(cmd) + " " + file + out);
      EXPECT_EQ(r.code, 3) << cmd << " " << c.knobs << ":\n" << r.output;
      EXPECT_NE(r.output.find(file + ": " + c.field + ": found"), std::string::npos) << cmd << " " << c.knobs
                                                                                     << ":\n" << r.output;
    }
  }
}

TEST(Knobs, AWrongJsonTypeIsAProblemReportNotAnInternalError) {
  ScratchDir dir;
  const std::string file = dir.write("s.json", scenario("{}", "2", R"({"holds_over": 2})"));
  const auto r = racelab("validate " + file);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(file + ": $.strategies[0].strategy: found an integer, expected a string"), std::string::npos)
      << r.output;
}

TEST(Knobs, GoodKnobsStillValidate) {
  ScratchDir dir;
  const std::string file = dir.write("s.json", scenario(R"({"flag_scope": "thread_local", "iterations": 2})"));
  const auto r = racelab("validate " + file);
  EXPECT_EQ(r.code, 0) << r.output;
}

}  // namespace
