// The shipped TSan suppressions file must load in a LibTorch process: a rule
// TSan rejects kills every supervised worker (exit 66) before the first trial.
// Measured here: `called_from_lib:libopenblas.so` matched libopenblas.so.0 under
// both /lib and /usr/lib and TSan aborted. These checks run in the normal build,
// so the mistake is caught without a TSan build of LibTorch code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

TEST(TsanSuppressions, EveryRuleIsARaceRuleWithAReason) {
  const char* path = std::getenv("RACELAB_TSAN_SUPP");
  ASSERT_NE(path, nullptr) << "CTest sets RACELAB_TSAN_SUPP to harness/tsan.supp";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::string line, previous;
  int rules = 0, lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') {
      previous = line;
      continue;
    }
    ++rules;
    EXPECT_EQ(line.rfind("race:", 0), 0u)
        << path << ":" << lineno << ": '" << line
        << "': only race: rules (called_from_lib: aborts TSan when a library is loaded under two paths)";
    EXPECT_TRUE(!previous.empty() && (previous[0] == '#' || previous.rfind("race:", 0) == 0))
        << path << ":" << lineno << ": a rule must follow the comment that gives its reason";
    previous = line;
  }
  EXPECT_GT(rules, 0) << path << " has no rules";
}

}  // namespace
