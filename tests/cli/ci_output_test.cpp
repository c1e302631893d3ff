// A failing `racelab ci` says on its last lines which expectation failed, in
// which cell and with what figures: a CI log is often read from its tail only.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

TEST(CiOutput, AFailingExpectationItsCellAndFiguresComeLast) {
  const std::string out = (std::filesystem::temp_directory_path() / "racelab-ci-output-test").string();
  const std::string cmd = std::string(RACELAB_EXE) + " ci " + CLI_DATA + "/unmet_expectation.json --out " + out +
                          " -j 1 --no-progress 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  const int status = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << text;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // After the summary ("wall time: ..."): each failing clause with its figures, then its cells.
  size_t tail = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("wall time:", 0) == 0) tail = i + 1;
  ASSERT_LT(tail, lines.size()) << text;
  const std::vector<std::string> last(lines.begin() + static_cast<std::ptrdiff_t>(tail), lines.end());
  ASSERT_EQ(last.size(), 3u) << text;
  EXPECT_EQ(last[0].rfind("FAIL unmet_expectation/global_lock: reproduces_within 2 -- did not reproduce within 2 "
                          "in 1 of 1 cells: 2 threads, random, seed 1 (no failure in 3 trials)",
                          0),
            0u)
      << text;
  EXPECT_EQ(last[1], "FAIL unmet_expectation/global_lock: outcome error -- no error in 3 trials") << text;
  EXPECT_EQ(last[2],
            "    cell unmet_expectation/global_lock, 2 threads, random, seed 1: 0 of 3 trials failed, budget 3 "
            "trials, done")
      << text;
  std::filesystem::remove_all(out);
}

}  // namespace
