// Markdown, JUnit, HTML and Chrome-trace renderings of a report.
#include <gtest/gtest.h>

#include <regex>

#include "fixtures.h"
#include "reports/report.h"
#include "reports/timeline.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;
using testing::make_temp_dir;
using testing::toy_results;

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + 1)) ++n;
  return n;
}

TEST(Markdown, HasTheVerdictTableWithOneRowPerMitigation) {
  const auto dir = make_temp_dir();
  const std::string md = render_markdown(build_report(toy_results(dir)));
  EXPECT_NE(md.find("| mitigation | toy leak |"), std::string::npos);
  EXPECT_NE(md.find("| none | **fails** 4/40 error ✔ |"), std::string::npos) << md;
  EXPECT_NE(md.find("| global_lock | holds 0/40 ✔ |"), std::string::npos);
  EXPECT_NE(md.find("Expectations: 3 passed, 0 failed, 0 incomplete"), std::string::npos);
}

// The header's mitigation catalogue orders the rows and groups "what people
// try first"; without it (older results files) rows follow the scenario.
ResultsData with_catalogue(const std::string& dir) {
  ResultsData d = toy_results(dir);
  d.headers[0]["mitigations"] = json::array({{{"name", "none"}, {"group", ""}},
                                             {{"name", "disable_check"}, {"group", "what people try first"}},
                                             {{"name", "global_lock"}, {"group", ""}}});
  return d;
}

TEST(Markdown, VerdictRowsFollowTheCatalogueAndGroupWhatPeopleTryFirst) {
  const auto dir = make_temp_dir();
  const json r = build_report(with_catalogue(dir));
  EXPECT_EQ(r["verdict_table"]["mitigations"], json::array({"none", "disable_check", "global_lock"}));
  EXPECT_EQ(r["verdict_table"]["groups"], json({{"disable_check", "what people try first"}}));
  const std::string md = render_markdown(r);
  const size_t none = md.find("| none |"), group = md.find("| **what people try first** |"),
               off = md.find("| disable_check |"), rest = md.find("| **other mitigations** |"),
               lock = md.find("| global_lock |");
  ASSERT_NE(group, std::string::npos) << md;
  ASSERT_NE(rest, std::string::npos) << md;
  EXPECT_LT(none, group);
  EXPECT_LT(group, off);
  EXPECT_LT(off, rest);
  EXPECT_LT(rest, lock);

  const std::string old = render_markdown(build_report(toy_results(dir)));
  EXPECT_EQ(old.find("what people try first"), std::string::npos);
  EXPECT_LT(old.find("| global_lock |"), old.find("| disable_check |"));  // the scenario's order
}

TEST(Html, VerdictTableGroupsWhatPeopleTryFirst) {
  const auto dir = make_temp_dir();
  const std::string html = render_html(build_report(with_catalogue(dir)));
  const size_t group = html.find("<tr class=\"group\"><th colspan=\"2\">what people try first</th></tr>");
  ASSERT_NE(group, std::string::npos);
  EXPECT_LT(group, html.find("<tr><th>disable_check</th>"));
  EXPECT_LT(html.find("<tr><th>disable_check</th>"), html.find(">other mitigations</th>"));
}

TEST(JUnit, OneTestCasePerExpectationAndFailuresCarryTheMeasurement) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  for (auto& t : data.trials)
    if (t.mitigation == "global_lock" && t.trial == 0) t.outcome = "wrong_result";
  const std::string xml = render_junit(build_report(data));
  EXPECT_EQ(count(xml, "<testcase "), 3u);
  EXPECT_EQ(count(xml, "<failure "), 1u);
  EXPECT_NE(xml.find("name=\"global_lock: holds over 40 trials\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("4 wrong_result"), std::string::npos);
  EXPECT_NE(xml.find("<testsuites name=\"racelab\" tests=\"3\" failures=\"1\""), std::string::npos);
}

TEST(JUnit, EscapesMarkup) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  data.headers[0]["scenarios"][0]["expectations"]["none"]["why"] = "a<b & \"c\"";
  const std::string xml = render_junit(build_report(data));
  EXPECT_NE(xml.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(xml.find("a<b"), std::string::npos);
}

TEST(Html, IsSelfContainedWithTableChartsAndTimeline) {
  const auto dir = make_temp_dir();
  const std::string html = render_html(build_report(toy_results(dir)));
  EXPECT_NE(html.find("<table class=\"verdict-table\" id=\"verdict-table\">"), std::string::npos);
  EXPECT_NE(html.find("class=\"chart chart-rate\""), std::string::npos);
  EXPECT_NE(html.find("class=\"chart chart-first-failure\""), std::string::npos);
  EXPECT_NE(html.find("class=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("class=\"failing-step\""), std::string::npos);
  EXPECT_NE(html.find("class=\"wait\""), std::string::npos);  // thread 2 waits for compile_lock
  EXPECT_EQ(count(html, "class=\"preemption\""), 2u);
  // Self-contained: no script, no external fetch of any kind.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "").find("http"),
            std::string::npos);
}

TEST(Html, CostChartAppearsWhenTheIdealIsSwept) {
  const auto dir = make_temp_dir();
  auto data = toy_results(dir);
  data.headers[0]["scenarios"][0]["cost"] = {{"ideal", "none"}, {"strategy", "random"}};
  const json r = build_report(data);
  const json& lock = r["scenarios"][0]["mitigations"][1];
  ASSERT_EQ(lock["name"], "global_lock");
  EXPECT_DOUBLE_EQ(lock["cost"]["relative"].get<double>(), 0.5);
  EXPECT_NE(render_html(r).find("class=\"chart chart-cost\""), std::string::npos);
}

TEST(Timeline, WaitsRunFromBlockToAcquireAndHoldsFromAcquireToRelease) {
  const Timeline t = read_timeline(testing::schedule_doc());
  EXPECT_EQ(t.threads, (std::vector<int>{1, 2}));
  ASSERT_EQ(t.waits.size(), 1u);
  EXPECT_EQ(t.waits[0].thread, 2);
  EXPECT_EQ(t.waits[0].begin, 3);
  EXPECT_EQ(t.waits[0].end, 6);
  ASSERT_EQ(t.holds.size(), 2u);
  EXPECT_EQ(t.running.size(), 3u);
  EXPECT_EQ(t.running[1].begin, 3);
  EXPECT_EQ(t.running[1].end, 6);
  EXPECT_EQ(t.preemptions.size(), 2u);
  EXPECT_EQ(t.failing_step, 4);
}

TEST(ChromeTrace, HasThreadTracksSlicesAndTheFailureMarker) {
  const json trace = chrome_trace(testing::schedule_doc());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  int names = 0, waits = 0, global = 0;
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph"));
    if (e["ph"] == "M" && e["name"] == "thread_name") ++names;
    if (e["ph"] == "X" && e["name"] == "wait compile_lock") {
      ++waits;
      EXPECT_EQ(e["tid"], 2);
      EXPECT_EQ(e["ts"], 3);
      EXPECT_EQ(e["dur"], 3);
    }
    if (e["ph"] == "i" && e["s"] == "g") {
      ++global;
      EXPECT_EQ(e["ts"], 4);
      EXPECT_EQ(e["name"], "failure: error");
    }
  }
  EXPECT_EQ(names, 2);
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(global, 1);
}

TEST(WriteReports, WritesEveryFormatAndTheTrace) {
  const auto dir = make_temp_dir();
  const json r = build_report(toy_results(dir));
  const auto files = write_reports(r, dir + "/out", dir + "/junit/x.xml");
  for (const auto& f : {files.json, files.markdown, files.html, files.junit}) {
    EXPECT_TRUE(std::filesystem::exists(f)) << f;
    EXPECT_FALSE(std::filesystem::exists(f + ".tmp")) << f;
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/out/traces/toy_leak.trace.json"));
  std::ifstream in(files.json);
  EXPECT_EQ(json::parse(in)["scenarios"][0]["name"], "toy_leak");
}

// A report kept as a CI artifact must not point at the machine that wrote it:
// every file it names is relative to the report's own directory.
TEST(WriteReports, NamesFilesRelativeToTheReportDirectory) {
  const auto dir = make_temp_dir();
  const json r = build_report(toy_results(dir));
  ASSERT_EQ(r["scenarios"][0]["timeline"]["schedule_file"], dir + "/toy.schedule.json");  // in memory: as built
  const auto files = write_reports(r, dir + "/out");
  std::ifstream in(files.json);
  const json written = json::parse(in);
  const auto& s = written["scenarios"][0];
  EXPECT_EQ(s["file"], "toy_leak.json");  // outside the report folder: its name only
  EXPECT_EQ(s["timeline"]["schedule_file"], "../toy.schedule.json");
  EXPECT_EQ(s["timeline"]["original_schedule_file"], "../toy.schedule.json");
  for (const auto& c : s["cells"]) {
    const std::string f = c["first_failure_schedule"].get<std::string>();
    EXPECT_TRUE(f.empty() || f == "../toy.schedule.json") << f;
  }
  for (const auto& f : {files.json, files.markdown, files.html}) {
    std::ifstream text(f);
    const std::string content((std::istreambuf_iterator<char>(text)), std::istreambuf_iterator<char>());
    EXPECT_EQ(content.find(dir), std::string::npos) << f << " names " << dir;
  }
}

}  // namespace
}  // namespace racelab::reports
