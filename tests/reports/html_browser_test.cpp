// Renders the HTML report in headless Chromium and checks what a reader sees:
// the verdict table and the timeline survive a real browser's parser (an
// unclosed tag or a malformed SVG would drop them from the DOM). Skips, not
// fails, where Chromium is not installed (`RACELAB_SETUP_BROWSER=1 bash ci/setup`).
// And the verdict matrix of the default catalogue fits a 1,400 px window.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "reports/report.h"

namespace racelab::reports {

using namespace racelab::campaign;
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

// The campaign `racelab compare scenarios/` would record, made up: every
// scenario of the default list (scenarios/*.json, their names, races and
// mitigations as written), one cell per mitigation with 3-digit trial counts,
// and where a mitigation is expected to fail, failures of the expected class
// and of a second one, as real runs show them.
ResultsData default_catalogue_results() {
  namespace fs = std::filesystem;
  ResultsData d;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(std::string(RACELAB_SOURCE_DIR) + "/scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  nlohmann::json docs = nlohmann::json::array();
  for (const auto& f : files) {
    nlohmann::json doc = nlohmann::json::parse(std::ifstream(f));
    doc["__file"] = fs::path(f).filename().string();
    const std::string name = doc["name"].get<std::string>();
    const std::string strategy = doc["strategies"][0]["strategy"].get<std::string>();
    const int threads = doc["threads"][0].get<int>();
    for (const auto& mj : doc["mitigations"]) {
      const std::string m = mj.get<std::string>();
      const nlohmann::json e = doc["expectations"].value(m, nlohmann::json::object());
      const bool fails = e.contains("outcome") || e.contains("reproduces_within");
      const std::string first = e.value("outcome", std::string("error"));
      const std::string second = first == "wrong_result" ? "stuck_state" : "wrong_result";
      for (int64_t t = 0; t < 140; ++t) {
        std::string outcome = !fails || t % 3 != 0 ? "holds" : (t % 2 == 0 ? first : second);
        TrialRecord r = testing::record(m, strategy, threads, t, outcome);
        r.scenario = name;
        r.workload = doc["workload"].get<std::string>();
        d.trials.push_back(r);
        d.cell_seeds.push_back(1);
      }
      d.cells.push_back({{"scenario", name}, {"mitigation", m}, {"threads", threads}, {"strategy", strategy},
                         {"seed", 1}, {"trials", 140}, {"failures", 0}, {"exhausted", false}, {"pct_floor", 0.0},
                         {"wall_s", 1.0}, {"interrupted", false}});
    }
    docs.push_back(doc);
  }
  d.headers.push_back({{"format", kResultsFormat},
                       {"version", kResultsVersion},
                       {"mode", "compare"},
                       {"budget_scale", 1.0},
                       {"shard", {1, 1}},
                       {"scenarios", docs}});
  d.ends.push_back({{"interrupted", false}, {"wall_s", 10.0}});
  return d;
}

// The verdict matrix of `bash ci/compare`'s report fits a 1,400 px window: no
// scrolling sideways, in the page or in the table's box. Measured in the page
// Chromium lays out (a script appended to a copy of the report writes the
// widths into the DOM, which --dump-dom prints), and painted at that width.
// The catalogue outgrew one table (18 races after issue 29: 1,812 px in a
// 1,351 px box), so the matrix is one table per 9 races, and every one of
// them must fit.
TEST(HtmlInChromium, TheDefaultCataloguesVerdictMatrixFits1400Pixels) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium not found: install it with `RACELAB_SETUP_BROWSER=1 bash ci/setup` "
                    "(Debian package chromium) or set RACELAB_CHROMIUM";
  const auto dir = testing::make_temp_dir();
  const nlohmann::json report = build_report(default_catalogue_results());
  ASSERT_GE(report["scenarios"].size(), 10u);
  const auto files = write_reports(report, dir + "/out");
  const std::string measured = dir + "/measured.html";
  {
    std::ifstream in(files.html);
    std::ofstream out(measured);
    out << in.rdbuf()
        << "<script>const boxes = [...document.querySelectorAll('.verdict-table')].map(t => t.parentElement);"
           "document.body.setAttribute('data-fit', JSON.stringify({page: document.documentElement.scrollWidth,"
           "window: innerWidth, tables: boxes.length, box: Math.min(...boxes.map(b => b.clientWidth)),"
           "table: Math.max(...boxes.map(b => b.scrollWidth))}));</script>\n";
  }
  int status = -1;
  const std::string dom = run("timeout 120 " + chromium + flags(dir + "/profile") +
                                  " --window-size=1400,1000 --dump-dom file://" + measured + " 2>/dev/null",
                              &status);
  ASSERT_EQ(status, 0) << "chromium failed; output: " << dom.substr(0, 500);
  const size_t at = dom.find("data-fit=\"");
  ASSERT_NE(at, std::string::npos) << "the measuring script did not run";
  std::string text = dom.substr(at + 10, dom.find('"', at + 10) - at - 10);
  for (size_t q; (q = text.find("&quot;")) != std::string::npos;) text.replace(q, 6, "\"");
  const nlohmann::json fit = nlohmann::json::parse(text);
  SCOPED_TRACE(fit.dump());
  EXPECT_EQ(fit["window"], 1400);
  EXPECT_EQ(fit["tables"].get<size_t>(), (report["scenarios"].size() + 8) / 9) << "one table per 9 races";
  EXPECT_LE(fit["table"].get<int>(), fit["box"].get<int>()) << "the matrix scrolls sideways in its box";
  EXPECT_LE(fit["page"].get<int>(), 1400) << "the page scrolls sideways";

  // And it paints at that width: the screenshot's PNG header says 1400 wide.
  const std::string png = dir + "/matrix.png";
  run("timeout 120 " + chromium + flags(dir + "/profile2") + " --window-size=1400,1000 --screenshot=" + png +
          " file://" + files.html + " 2>/dev/null",
      &status);
  ASSERT_EQ(status, 0);
  std::ifstream in(png, std::ios::binary);
  std::string head(24, '\0');
  in.read(head.data(), 24);
  ASSERT_EQ(head.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const auto byte = [&](int i) { return static_cast<uint32_t>(static_cast<unsigned char>(head[i])); };
  EXPECT_EQ(byte(16) << 24 | byte(17) << 16 | byte(18) << 8 | byte(19), 1400u);  // IHDR width
}

}  // namespace
}  // namespace racelab::reports
