// Renders the HTML report in headless Chromium and checks what a reader sees:
// the verdict table and the timeline survive a real browser's parser (an
// unclosed tag or a malformed SVG would drop them from the DOM). Skips, not
// fails, where Chromium is not installed (`RACELAB_SETUP_BROWSER=1 bash ci/setup`).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include "fixtures.h"
#include "reports/report.h"

namespace racelab::reports {
namespace {

std::string find_chromium() {
  if (const char* env = std::getenv("RACELAB_CHROMIUM"); env && *env) return env;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}) {
    const std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return name;
  }
  return "";
}

std::string run(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  *status = ::pclose(p);
  return out;
}

std::string flags(const std::string& profile) {
  return " --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
         " --disable-sync --no-first-run --disable-dev-shm-usage --user-data-dir=" + profile;
}

TEST(HtmlInChromium, TableAndTimelineAreInTheRenderedDom) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium not found: install it with `RACELAB_SETUP_BROWSER=1 bash ci/setup` "
                    "(Debian package chromium) or set RACELAB_CHROMIUM";
  const auto dir = testing::make_temp_dir();
  const auto files = write_reports(build_report(testing::toy_results(dir)), dir + "/out");
  int status = -1;
  const std::string dom = run("timeout 120 " + chromium + flags(dir + "/profile") + " --dump-dom file://" +
                                  files.html + " 2>/dev/null",
                              &status);
  ASSERT_EQ(status, 0) << "chromium failed; output: " << dom.substr(0, 500);
  EXPECT_NE(dom.find("id=\"verdict-table\""), std::string::npos);
  EXPECT_NE(dom.find("<td class=\"fails\""), std::string::npos);
  EXPECT_NE(dom.find("class=\"timeline\""), std::string::npos);
  EXPECT_NE(dom.find("class=\"failing-step\""), std::string::npos);
  EXPECT_NE(dom.find("class=\"chart chart-rate\""), std::string::npos);

  // And it paints: a screenshot is a real, non-trivial PNG.
  const std::string png = dir + "/page.png";
  run("timeout 120 " + chromium + flags(dir + "/profile2") + " --window-size=1280,1600 --screenshot=" + png +
          " file://" + files.html + " 2>/dev/null",
      &status);
  ASSERT_EQ(status, 0);
  std::ifstream in(png, std::ios::binary);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(std::filesystem::file_size(png), 20000u);
}

}  // namespace
}  // namespace racelab::reports
