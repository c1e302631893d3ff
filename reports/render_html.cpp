// render_html(): the one-file comparison page (see report.h). Inline CSS and
// SVG only -- no script, no external resource -- so it can be attached to a CI
// run or mailed and still render.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "reports/beside_model.h"
#include "reports/report.h"
#include "reports/svg.h"
#include "reports/timeline.h"
#include "reports/xml_escape.h"

namespace racelab::reports {

namespace {

using nlohmann::json;

constexpr const char* kFail = "#c0392b";
constexpr const char* kHold = "#2e8b57";
constexpr const char* kSilent = "#d68910";
constexpr const char* kGrey = "#9aa3ab";

const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1360px;color:#1d2329;padding:0 16px}
h1{font-size:24px;margin:0 0 4px} h2{font-size:19px;margin:36px 0 6px;border-bottom:1px solid #dde2e6;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px} .meta{color:#56606a} .warn{background:#fff3cd;padding:6px 10px;border-radius:4px}
table{border-collapse:collapse;margin:8px 0} th,td{border:1px solid #dde2e6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f7;font-weight:600} td.fails{background:#fbe3e0} td.holds{background:#e3f4ea} td.silent{background:#fdf0d5}
td.nodata{color:#9aa3ab} tr.group th{text-align:left;font-style:italic;background:#eef1f4} .mark{font-weight:700;margin-left:4px} .pass{color:#2e8b57} .fail{color:#c0392b} .incomplete{color:#8a6d00}
.small{font-size:12px;color:#56606a} .scroll{overflow-x:auto;border:1px solid #eef1f3;padding:4px}
.verdict-table{font-size:13px;line-height:1.35} .verdict-table th,.verdict-table td{padding:3px 5px}
.verdict-table td .mark{margin-left:2px}
svg text{font:11px system-ui,sans-serif;fill:#1d2329} code{background:#f3f5f7;padding:1px 4px;border-radius:3px;word-break:break-all}
.charts{display:flex;flex-wrap:wrap;gap:24px}
.legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px}
)";

const char* mark(const std::string& status) { return status == "pass" ? "✔" : status == "fail" ? "✘" : "…"; }

std::string verdict_class(const json& m) {
  if (m["verdict"] == "no data") return "nodata";
  if (m["verdict"] == "holds") return "holds";
  const auto& c = m["failure_classes"];
  return (c.size() == 1 && c[0] == "silent_fallback") ? "silent" : "fails";
}

const char* verdict_colour(const std::string& cls) {
  return cls == "holds" ? kHold : cls == "silent" ? kSilent : cls == "fails" ? kFail : kGrey;
}

std::string anchor(const std::string& name) { return "scenario-" + name; }

// A report string, escaped. The report's strings are read explicitly (never by an
// implicit json -> string conversion, which LibTorch 2.x's nlohmann no longer allows here).
std::string esc(const json& text) { return xml_escape(text.get<std::string>()); }

// Escaped, with a line-break opportunity after every '_' and '/': a narrow
// matrix column may wrap "silent_fallback" or "save/restore" rather than widen.
std::string breakable(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += xml_escape(std::string(1, c));
    if (c == '_' || c == '/') out += "<wbr>";
  }
  return out;
}

// Failure rate per mitigation, with its 95% Wilson interval as whiskers.
std::string rate_chart(const json& s) {
  const double label_w = 130, plot_w = 360, row_h = 22, top = 20;
  const double h = top + row_h * s["mitigations"].size() + 24;
  std::string out = svg::open(label_w + plot_w + 150, h, "chart chart-rate",
                               "failure rate per mitigation with 95% Wilson intervals");
  out += svg::text(label_w, 12, "failure rate (bars) and 95% Wilson interval (whiskers)", "start", "class=\"small\"");
  for (int pct = 0; pct <= 100; pct += 25) {
    const double x = label_w + plot_w * pct / 100.0;
    out += svg::line(x, top - 4, x, h - 20, "#eef1f3");
    out += svg::text(x, h - 6, std::to_string(pct) + "%", "middle");
  }
  double y = top;
  for (const auto& m : s["mitigations"]) {
    const double rate = m["rate"].get<double>(), lo = m["wilson"][0].get<double>(), hi = m["wilson"][1].get<double>();
    const std::string cls = verdict_class(m);
    const std::string tip = fmt::format("{}: {} of {} trials failed ({:.1f}%, 95% CI {:.1f}-{:.1f}%)",
                                        m["name"].get<std::string>(), m["failures"].get<int64_t>(),
                                        m["trials"].get<int64_t>(), 100 * rate, 100 * lo, 100 * hi);
    out += svg::text(label_w - 6, y + 14, m["name"].get<std::string>(), "end");
    out += svg::rect(label_w, y + 4, plot_w * rate, row_h - 8, verdict_colour(cls), tip);
    if (m["trials"].get<int64_t>() > 0) {
      const double x1 = label_w + plot_w * lo, x2 = label_w + plot_w * hi, cy = y + row_h / 2;
      out += svg::line(x1, cy, x2, cy, "#1d2329", 1.5);
      out += svg::line(x1, cy - 5, x1, cy + 5, "#1d2329", 1.5);
      out += svg::line(x2, cy - 5, x2, cy + 5, "#1d2329", 1.5);
    }
    out += svg::text(label_w + plot_w + 8, y + 14,
                     fmt::format("{}/{} ({:.0f}%)", m["failures"].get<int64_t>(), m["trials"].get<int64_t>(), 100 * rate));
    y += row_h;
  }
  return out + svg::close();
}

// Trials to the first failure per strategy, grouped by thread count, log scale.
std::string first_failure_chart(const json& s) {
  const auto& ff = s["first_failure"];
  if (ff.empty()) return "";
  int64_t max_v = 1;
  for (const auto& f : ff)
    for (const auto& c : f["cells"])
      max_v = std::max({max_v, c["first_failure_trial"].get<int64_t>(), c["trials"].get<int64_t>()});
  const double label_w = 130, plot_w = 300, bar_h = 14;
  const double group_h = bar_h * ff.size() + 10;
  const double h = 24 + group_h * s["threads"].size() + 24;
  const char* colours[] = {"#2c7fb8", "#7fcdbb", "#f0a04b", "#8e44ad", "#16a085", "#7f8c8d"};
  std::string out = svg::open(label_w + plot_w + 280, h, "chart chart-first-failure",
                              "trials to the first failure per strategy");
  out += svg::text(label_w, 12,
                   fmt::format("trials to first failure ({}; log scale; grey: none found)",
                               ff[0]["mitigation"].get<std::string>()),
                   "start", "class=\"small\"");
  auto xof = [&](double v) { return label_w + plot_w * std::log10(1 + v) / std::log10(1 + double(max_v)); };
  double y = 24;
  for (const auto& t : s["threads"]) {
    const double group_top = y;
    for (size_t i = 0; i < ff.size(); ++i) {
      for (const auto& c : ff[i]["cells"]) {
        if (c["threads"] != t) continue;
        const int64_t v = c["first_failure_trial"].get<int64_t>(), n = c["trials"].get<int64_t>();
        const std::string strat = ff[i]["strategy"].get<std::string>();
        std::string label = v > 0 ? fmt::format("{}: {}", strat, v) : fmt::format("{}: none in {}", strat, n);
        if (c.value("pct_floor", 0.0) > 0) label += fmt::format(" (PCT floor {:.3g})", c["pct_floor"].get<double>());
        if (v > 0)
          out += svg::rect(label_w, y, xof(double(v)) - label_w, bar_h - 3, colours[i % 6], label);
        else
          out += svg::rect(label_w, y, xof(double(n)) - label_w, bar_h - 3, "#e5e8eb", label,
                           "stroke=\"#9aa3ab\" stroke-dasharray=\"3 2\"");
        out += svg::text(std::max(xof(double(v > 0 ? v : n)), label_w) + 4, y + bar_h - 5, label);
        y += bar_h;  // strategies that skip this thread count leave no gap
        break;       // one seed drawn per strategy and thread count
      }
    }
    out += svg::text(label_w - 6, (group_top + y) / 2 + 3, fmt::format("{} threads", t.get<int>()), "end");
    y += 10;
  }
  return out + svg::close();
}

// Steps/s relative to the ideal mitigation; the dashed line is the ideal.
std::string cost_chart(const json& s) {
  std::vector<const json*> rows;
  double max_rel = 1.0;
  for (const auto& m : s["mitigations"])
    if (!m["cost"].is_null() && !m["cost"]["relative"].is_null()) {
      rows.push_back(&m);
      max_rel = std::max(max_rel, m["cost"]["relative"].get<double>());
    }
  if (rows.empty()) return "";
  max_rel *= 1.1;
  const double label_w = 130, plot_w = 320, row_h = 22, top = 20;
  const double h = top + row_h * rows.size() + 24;
  std::string out = svg::open(label_w + plot_w + 260, h, "chart chart-cost", "cost per mitigation");
  out += svg::text(label_w, 12,
                   fmt::format("{} relative to {} (dashed = ideal)", s["cost_spec"]["metric"].get<std::string>(),
                               s["cost_spec"]["ideal"].get<std::string>()),
                   "start", "class=\"small\"");
  double y = top;
  for (const json* m : rows) {
    const double rel = (*m)["cost"]["relative"].get<double>();
    out += svg::text(label_w - 6, y + 14, (*m)["name"].get<std::string>(), "end");
    const json& cost = (*m)["cost"];
    const std::string comparison = cost.value("comparison", std::string());
    out += svg::rect(label_w, y + 4, plot_w * rel / max_rel, row_h - 8, verdict_colour(verdict_class(*m)),
                     fmt::format("{}: {} {} = {}x ideal, {}", (*m)["name"].get<std::string>(), cost_value_text(cost),
                                 s["cost_spec"]["metric"].get<std::string>(), cost_relative_text(cost), comparison));
    const json noise = cost.value("relative_noise", json());
    if (noise.is_number()) {  // the noise as a whisker
      const double lo = std::max(0.0, rel - noise.get<double>()), hi = rel + noise.get<double>();
      out += svg::line(label_w + plot_w * lo / max_rel, y + row_h / 2, label_w + plot_w * std::min(hi, max_rel) / max_rel,
                       y + row_h / 2, "#1d2329", 1);
    }
    out += svg::text(label_w + plot_w + 8, y + 14,
                     fmt::format("{}x{}", cost_relative_text(cost),
                                 comparison == "same within noise" ? " (same within noise)" : ""));
    y += row_h;
  }
  const double x1 = label_w + plot_w / max_rel;
  out += svg::line(x1, top - 2, x1, h - 20, "#1d2329", 1) ;
  out += svg::text(x1, h - 6, "1.0 = ideal", "middle");
  return out + svg::close();
}

// Per-thread lanes: who runs (from the decisions), lock waits and holds,
// points, forced preemptions, and the failing step as a red band.
std::string timeline_svg(const json& s, const json& schedule) {
  const Timeline t = read_timeline(schedule);
  if (t.threads.empty() || t.steps == 0) return "<p class=\"small\">The schedule has no decisions or events to draw.</p>";
  const double left = 80, lane_h = 38, top = 30;
  const double sw = std::clamp(1000.0 / double(t.steps), 4.0, 56.0);
  const double width = left + sw * double(t.steps) + 140;  // room for the failing-step label
  const double height = top + lane_h * t.threads.size() + 30;
  std::map<int, double> lane;
  for (size_t i = 0; i < t.threads.size(); ++i) lane[t.threads[i]] = top + lane_h * i;
  auto x = [&](int64_t step) { return left + sw * double(step); };

  std::string out = svg::open(width, height, "timeline",
                              "per-thread timeline of the minimised failing schedule of " + s["name"].get<std::string>());
  // Step axis.
  const int64_t tick = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(60.0 / sw)));
  for (int64_t st = 0; st <= t.steps; st += tick) {
    out += svg::line(x(st), top - 6, x(st), height - 26, "#f0f2f4");
    out += svg::text(x(st), height - 12, std::to_string(st), "middle");
  }
  out += svg::text(left, 14, "step →", "start", "class=\"small\"");
  if (t.failing_step >= 0) {
    out += svg::rect(x(t.failing_step), top - 8, sw, height - top - 18, "#f5b7b1",
                     fmt::format("failing step {}: {} {}", t.failing_step, t.outcome, t.detail),
                     "class=\"failing-step\" opacity=\"0.85\"");
    out += svg::text(x(t.failing_step) + sw / 2, top - 12, fmt::format("✘ step {}: {}", t.failing_step, t.outcome),
                     "middle", "fill=\"#c0392b\" font-weight=\"700\"");
  }
  for (int th : t.threads) {
    const double y = lane.at(th);
    out += svg::text(left - 8, y + lane_h / 2 + 4, fmt::format("thread {}", th), "end");
    out += svg::line(left, y + lane_h / 2, x(t.steps), y + lane_h / 2, "#dde2e6");
  }
  for (const auto& sp : t.running)
    out += svg::rect(x(sp.begin), lane.at(sp.thread) + lane_h / 2 - 5, x(sp.end) - x(sp.begin), 10, "#a9cce3",
                     fmt::format("thread {} runs, steps {}-{} (from {})", sp.thread, sp.begin, sp.end - 1, sp.what),
                     "class=\"run\"");
  for (const auto& sp : t.holds)
    out += svg::rect(x(sp.begin), lane.at(sp.thread) + 4, x(sp.end) - x(sp.begin), 5, "#2c7fb8",
                     fmt::format("thread {} holds {}, steps {}-{}", sp.thread, sp.what, sp.begin, sp.end - 1),
                     "class=\"hold\"");
  for (const auto& sp : t.waits)
    out += svg::rect(x(sp.begin), lane.at(sp.thread) + lane_h - 10, x(sp.end) - x(sp.begin), 6, "#e67e22",
                     fmt::format("thread {} waits for {}, steps {}-{}", sp.thread, sp.what, sp.begin, sp.end - 1),
                     "class=\"wait\"");
  for (const auto& p : t.points)
    out += svg::circle(x(p.step) + sw / 2, lane.at(p.thread) + lane_h / 2, std::min(3.5, sw / 2.5), "#1d2329",
                       fmt::format("step {}: thread {} at {}", p.step, p.thread, p.what));
  for (const auto& p : t.preemptions) {
    const double cx = x(p.step), y = lane.at(p.thread);
    out += fmt::format(R"(<path class="preemption" d="M{:.1f} {:.1f} l5 -8 l-10 0 z" fill="#8e44ad"><title>{}</title></path>)",
                       cx, y + 8, xml_escape(fmt::format("step {}: preemption, thread {} runs from {}", p.step, p.thread, p.what)));
  }
  return out + svg::close();
}

std::string decisions_table(const json& schedule) {
  std::string rows;
  int shown = 0;
  for (const auto& d : schedule.value("decisions", json::array())) {
    if (!d.is_object() || !d.value("preemption", false)) continue;
    if (++shown > 40) break;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td><code>{}</code></td></tr>", d.value("step", 0),
                        d.value("thread", 0), xml_escape(d.value("point", "")));
  }
  if (rows.empty()) return "";
  return "<table class=\"preemptions\"><tr><th>step</th><th>switch to thread</th><th>at point</th></tr>" + rows +
         "</table>";
}

}  // namespace

std::string render_html(const json& report) {
  const auto& c = report["campaign"];
  const auto& e = report["expectations"];
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                  "<title>racelab mitigation comparison</title><style>";
  h += kStyle;
  h += "</style></head><body>\n<h1>racelab mitigation comparison</h1>\n";
  h += fmt::format("<p class=\"meta\">racelab {} · LibTorch {} · generated {} · mode <code>{}</code> · budget scale {} · "
                   "{} trials in {:.1f} s · {} of {} cells</p>\n",
                   xml_escape(report["racelab_version"].get<std::string>()),
                   xml_escape(report.value("libtorch", std::string("unknown"))),
                   xml_escape(report["generated"].get<std::string>()), xml_escape(c["mode"].get<std::string>()),
                   c["budget_scale"].get<double>(), c["trials"].get<int64_t>(), c["wall_s"].get<double>(),
                   c["cells_done"].get<int64_t>(), c["cells_planned"].get<int64_t>());
  if (!c["complete"].get<bool>())
    h += fmt::format("<p class=\"warn\"><b>{}</b>: this report covers {} of {} cells. Every finished trial is "
                     "included; undecided expectations are marked …</p>\n",
                     c["interrupted"].get<bool>() ? "Interrupted campaign" : "Partial campaign (one shard?)",
                     c["cells_done"].get<int64_t>(), c["cells_planned"].get<int64_t>());
  h += fmt::format("<p id=\"expectation-summary\">Expectations: <b class=\"pass\">{} passed</b>, "
                   "<b class=\"fail\">{} failed</b>, <b class=\"incomplete\">{} incomplete</b> of {}.</p>\n",
                   e["passed"].get<int64_t>(), e["failed"].get<int64_t>(), e["incomplete"].get<int64_t>(),
                   e["total"].get<int64_t>());

  // The verdict table.
  h += "<h2 id=\"verdicts\">Verdicts: mitigation × race</h2>\n<p class=\"small\">Each cell: failing / total trials "
       "over every thread count and strategy, and the failure classes seen. Red: the race reproduces; green: it "
       "holds; amber: it only falls back silently. ✔ the scenario's expectation holds, ✘ it does not, … not "
       "decided yet.</p>\n";
  // At most kMatrixRaces races side by side: a wider matrix scrolls sideways
  // in a 1,400 px window (the render test measures it in Chromium). A larger
  // catalogue gets one table per kMatrixRaces races, in catalogue order, each
  // with every mitigation's row; the first keeps the id verdict-table.
  constexpr size_t kMatrixRaces = 9;
  const json& scenarios = report["scenarios"];
  const json groups = report["verdict_table"].value("groups", json::object());
  for (size_t from = 0; from < scenarios.size(); from += kMatrixRaces) {
    const size_t to = std::min(scenarios.size(), from + kMatrixRaces);
    h += fmt::format("<div class=\"scroll\"><table class=\"verdict-table\"{}><tr><th>mitigation</th>",
                     from == 0 ? " id=\"verdict-table\"" : "");
    for (size_t i = from; i < to; ++i)
      h += fmt::format("<th><a href=\"#{}\">{}</a></th>", anchor(scenarios[i]["name"].get<std::string>()),
                       breakable(scenarios[i]["race"].get<std::string>()));
    h += "</tr>\n";
    std::string group;  // of the previous row
    for (const auto& name : report["verdict_table"]["mitigations"]) {
      // A label row where a group starts ("what people try first") and where it ends.
      const std::string g = groups.value(name.get<std::string>(), "");
      if (g != group) {
        h += fmt::format("<tr class=\"group\"><th colspan=\"{}\">{}</th></tr>\n", to - from + 1,
                         xml_escape(g.empty() ? "other mitigations" : g));
        group = g;
      }
      h += "<tr><th>" + esc(name) + "</th>";
      for (size_t i = from; i < to; ++i) {
        const json* m = nullptr;
        for (const auto& x : scenarios[i]["mitigations"])
          if (x["name"] == name) m = &x;
        if (!m) {
          h += "<td class=\"nodata\">not swept</td>";
          continue;
        }
        const std::string st = (*m)["check"]["status"].get<std::string>();
        std::string classes;
        for (const auto& k : (*m)["failure_classes"]) classes += (classes.empty() ? "" : ", ") + k.get<std::string>();
        h += fmt::format("<td class=\"{}\" title=\"{}\"><b>{}</b> {}/{}<span class=\"mark {}\">{}</span><br>"
                         "<span class=\"small\">{}</span></td>",
                         verdict_class(*m),
                         xml_escape("expected: " + (*m)["check"]["describe"].get<std::string>() + "; rests on: " +
                                    (*m).value("grounds", json::object()).value("text", "")),
                         esc((*m)["verdict"]), (*m)["failures"].get<int64_t>(), (*m)["trials"].get<int64_t>(), st,
                         mark(st), xml_escape(classes));
      }
      h += "</tr>\n";
    }
    h += "</table></div>\n";
  }
  h += beside_model_html(report);

  for (const auto& s : report["scenarios"]) {
    h += fmt::format("<section id=\"{}\"><h2>{} <span class=\"small\"><code>{}</code></span></h2>\n<p>{}</p>\n",
                     anchor(s["name"].get<std::string>()), esc(s["race"]), esc(s["name"]), esc(s["description"]));
    h += fmt::format("<p class=\"small\">workload <code>{}</code> · knobs <code>{}</code> · threads {} · strategies {}</p>\n",
                     esc(s["workload"]), xml_escape(s["knobs"].dump()), xml_escape(s["threads"].dump()),
                     xml_escape(s["strategies"].dump()));
    h += "<div class=\"charts\"><div>" + rate_chart(s) + "</div><div>" + first_failure_chart(s) + "</div>";
    const std::string cost = cost_chart(s);
    if (!cost.empty()) h += "<div>" + cost + "</div>";
    h += "</div>\n";

    h += "<table class=\"mitigations\"><tr><th>mitigation</th><th>verdict</th><th>failures / trials</th>"
         "<th>rate [95% Wilson]</th><th>expected</th><th>check</th><th>measured</th></tr>\n";
    for (const auto& m : s["mitigations"]) {
      std::string measured;
      for (const auto& cl : m["check"]["clauses"])
        measured += (measured.empty() ? "" : "<br>") + xml_escape(cl["clause"].get<std::string>() + ": " +
                                                              cl["measured"].get<std::string>());
      std::string why = m["check"]["why"].get<std::string>();
      const std::string st = m["check"]["status"].get<std::string>();
      const std::string grounds = m.value("grounds", json::object()).value("text", "");
      h += fmt::format("<tr><th>{}</th><td class=\"{}\">{}{}</td><td>{} / {}</td><td>{:.1f}% [{:.1f}, {:.1f}]</td>"
                       "<td>{}{}</td><td class=\"{}\">{} {}</td><td class=\"small\">{}</td></tr>\n",
                       esc(m["name"]), verdict_class(m), esc(m["verdict"]),
                       grounds.empty() ? "" : "<br><span class=\"small grounds\">rests on: " + xml_escape(grounds) + "</span>",
                       m["failures"].get<int64_t>(),
                       m["trials"].get<int64_t>(), 100 * m["rate"].get<double>(), 100 * m["wilson"][0].get<double>(),
                       100 * m["wilson"][1].get<double>(), esc(m["check"]["describe"]),
                       why.empty() ? "" : "<br><span class=\"small\">" + xml_escape(why) + "</span>", st, mark(st), st,
                       measured);
    }
    h += "</table>\n";

    const auto& tl = s["timeline"];
    h += "<h3>Minimised failing schedule</h3>\n";
    if (tl.is_null()) {
      h += "<p class=\"small\">No failing trial with a schedule file (free-running failures have no schedule).</p>\n";
    } else if (tl["schedule"].is_null()) {
      h += "<p class=\"small\">" + xml_escape(tl.value("problem", "schedule unavailable")) + "</p>\n";
    } else {
      const auto& sc = tl["schedule"];
      h += fmt::format("<p><b>{}</b> under <code>{}</code>, strategy <code>{}</code>, {} threads: {} preemptions "
                       "(minimised from {}). {}</p>\n",
                       esc(tl["outcome"]), esc(tl["mitigation"]), esc(tl["strategy"]), tl["threads"].get<int>(),
                       sc.value("preemptions", 0), sc.value("minimized_from_preemptions", sc.value("preemptions", 0)),
                       esc(tl["detail"]));
      h += "<p class=\"legend small\"><span><i class=\"sw\" style=\"background:#a9cce3\"></i>running</span>"
           "<span><i class=\"sw\" style=\"background:#2c7fb8\"></i>holds a lock</span>"
           "<span><i class=\"sw\" style=\"background:#e67e22\"></i>waits for a lock</span>"
           "<span><i class=\"sw\" style=\"background:#1d2329;border-radius:6px\"></i>interleaving point</span>"
           "<span><i class=\"sw\" style=\"background:#8e44ad\"></i>preemption</span>"
           "<span><i class=\"sw\" style=\"background:#f5b7b1\"></i>failing step</span></p>\n";
      h += "<div class=\"scroll\">" + timeline_svg(s, sc) + "</div>\n" + decisions_table(sc);
      h += fmt::format("<p class=\"small\">Schedule <code>{}</code>; Chrome trace <code>traces/{}.trace.json</code> "
                       "(open in ui.perfetto.dev); replay: <code>{}</code></p>\n",
                       esc(tl["schedule_file"]), esc(s["name"]), esc(tl["compact"]));
    }
    h += "</section>\n";
  }
  if (!c["warnings"].empty()) {
    h += "<h2>Warnings</h2><ul>";
    for (const auto& w : c["warnings"]) h += "<li>" + esc(w) + "</li>";
    h += "</ul>\n";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace racelab::reports
