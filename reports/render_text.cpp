// Markdown and JUnit renderings of a report (see report.h).
#include <fmt/format.h>

#include "reports/beside_model.h"
#include "reports/report.h"
#include "reports/xml_escape.h"

namespace racelab::reports {

namespace {

using nlohmann::json;

const char* status_mark(const std::string& status) {
  return status == "pass" ? "✔" : status == "fail" ? "✘" : "…";
}

std::string classes_text(const json& m) {
  std::string out;
  for (auto it = m["by_outcome"].begin(); it != m["by_outcome"].end(); ++it) {
    if (it.key() == "holds") continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", it.value().get<int64_t>(), it.key());
  }
  return out;
}

std::string md_escape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

const json* find_mitigation(const json& scenario, const std::string& name) {
  for (const auto& m : scenario["mitigations"])
    if (m["name"] == name) return &m;
  return nullptr;
}

}  // namespace

// "123.4 ± 5.6 (n 6)": the cost metric with its spread (sample sd).
std::string cost_value_text(const json& cost) {
  std::string out = fmt::format("{:.2f}", cost["value"].get<double>());
  if (cost.value("value_sd", json()).is_number()) out += fmt::format(" ± {:.2f}", cost["value_sd"].get<double>());
  if (cost.contains("trials")) out += fmt::format(" (n {})", cost["trials"].get<int64_t>());
  return out;
}

// "0.86 ± 0.05", or the bare ratio with "(noise unknown)".
std::string cost_relative_text(const json& cost) {
  if (cost["relative"].is_null()) return "—";
  const double r = cost["relative"].get<double>();
  const json noise = cost.value("relative_noise", json());
  return noise.is_number() ? fmt::format("{:.2f} ± {:.2f}", r, noise.get<double>()) : fmt::format("{:.2f}", r);
}

static std::string verdict_cell_text(const json& m) {
  if (m["verdict"] == "no data") return "—";
  const int64_t t = m["trials"].get<int64_t>(), f = m["failures"].get<int64_t>();
  std::string cls;
  for (const auto& c : m["failure_classes"]) cls += (cls.empty() ? "" : "+") + c.get<std::string>();
  return fmt::format("{} {}/{}{}", m["verdict"] == "fails" ? "**fails**" : "holds", f, t,
                     cls.empty() ? "" : " " + cls);
}

std::string render_markdown(const json& report) {
  const auto& c = report["campaign"];
  const auto& e = report["expectations"];
  std::string md = "# racelab mitigation comparison\n\n";
  const std::string torch = report.value("torch", std::string());
  md += fmt::format("racelab {} · LibTorch {}{} · {} · mode `{}` · budget scale {} · {} trials in {:.1f} s · {}\n\n",
                    report["racelab_version"].get<std::string>(), report.value("libtorch", std::string("unknown")),
                    torch.empty() ? "" : " · torch " + torch + " (its expectations and model knobs)",
                    report["generated"].get<std::string>(),
                    c["mode"].get<std::string>(), c["budget_scale"].get<double>(), c["trials"].get<int64_t>(),
                    c["wall_s"].get<double>(),
                    c["complete"].get<bool>()
                        ? std::string("complete")
                        : fmt::format("**{}: {} of {} cells**", c["interrupted"].get<bool>() ? "INTERRUPTED" : "PARTIAL",
                                      c["cells_done"].get<int64_t>(), c["cells_planned"].get<int64_t>()));
  md += fmt::format("Expectations: {} passed, {} failed, {} incomplete (of {}).\n\n", e["passed"].get<int64_t>(),
                    e["failed"].get<int64_t>(), e["incomplete"].get<int64_t>(), e["total"].get<int64_t>());

  md += "## Verdicts (mitigation × race)\n\nEach cell: verdict, failing/total trials over every thread count and "
        "strategy, failure classes; ✔ the scenario's expectation holds, ✘ it does not, … not decided yet.\n\n";
  md += "| mitigation |";
  for (const auto& s : report["scenarios"]) md += " " + md_escape(s["race"].get<std::string>()) + " |";
  md += "\n|---|";
  for (size_t i = 0; i < report["scenarios"].size(); ++i) md += "---|";
  md += "\n";
  const json groups = report["verdict_table"].value("groups", json::object());
  std::string group;  // of the previous row
  for (const auto& name : report["verdict_table"]["mitigations"]) {
    // A label row where a group starts ("what people try first") and where it ends.
    const std::string g = groups.value(name.get<std::string>(), "");
    if (g != group) {
      md += "| **" + md_escape(g.empty() ? "other mitigations" : g) + "** |";
      for (size_t i = 0; i < report["scenarios"].size(); ++i) md += " |";
      md += "\n";
      group = g;
    }
    md += "| " + name.get<std::string>() + " |";
    for (const auto& s : report["scenarios"]) {
      const json* m = find_mitigation(s, name.get<std::string>());
      md += m ? fmt::format(" {} {} |", verdict_cell_text(*m), status_mark((*m)["check"]["status"].get<std::string>())) : " |";
    }
    md += "\n";
  }
  md += beside_model_markdown(report);

  for (const auto& s : report["scenarios"]) {
    md += fmt::format("\n## {} (`{}`)\n\n{}\n\nWorkload `{}`, threads {}, strategies {}.\n\n",
                      s["race"].get<std::string>(), s["name"].get<std::string>(), s["description"].get<std::string>(),
                      s["workload"].get<std::string>(), s["threads"].dump(), s["strategies"].dump());
    md += "| mitigation | verdict | rests on | failures / trials | rate [95% Wilson] | classes | expected | check | "
          "measured |\n";
    md += "|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& m : s["mitigations"]) {
      std::string measured;
      for (const auto& cl : m["check"]["clauses"])
        measured += (measured.empty() ? "" : "; ") + cl["measured"].get<std::string>();
      md += fmt::format("| {} | {} | {} | {} / {} | {:.1f}% [{:.1f}, {:.1f}] | {} | {} | {} {} | {} |\n",
                        m["name"].get<std::string>(), m["verdict"].get<std::string>(),
                        md_escape(m.value("grounds", json::object()).value("text", "")), m["failures"].get<int64_t>(),
                        m["trials"].get<int64_t>(), 100 * m["rate"].get<double>(),
                        100 * m["wilson"][0].get<double>(), 100 * m["wilson"][1].get<double>(),
                        md_escape(classes_text(m)), md_escape(m["check"]["describe"].get<std::string>()),
                        status_mark(m["check"]["status"].get<std::string>()), m["check"]["status"].get<std::string>(),
                        md_escape(measured));
    }
    bool any_cost = false;
    for (const auto& m : s["mitigations"]) any_cost |= !m["cost"].is_null();
    if (any_cost) {
      md += fmt::format("\nCost: {} in `{}` cells, relative to `{}` (± about 95%: twice the standard error over "
                        "the trials; within it, the difference is noise).\n\n| mitigation | {} | relative | compared "
                        "with the ideal |\n|---|---|---|---|\n",
                        s["cost_spec"]["metric"].get<std::string>(), s["cost_spec"]["strategy"].get<std::string>(),
                        s["cost_spec"]["ideal"].get<std::string>(), s["cost_spec"]["metric"].get<std::string>());
      for (const auto& m : s["mitigations"]) {
        if (m["cost"].is_null()) continue;
        md += fmt::format("| {} | {} | {} | {} |\n", m["name"].get<std::string>(), cost_value_text(m["cost"]),
                          cost_relative_text(m["cost"]), m["cost"].value("comparison", std::string("—")));
      }
    }
    md += "\nTrials to the first failure (mitigation `" +
          (s["first_failure"].empty() ? std::string("none") : s["first_failure"][0]["mitigation"].get<std::string>()) +
          "`):\n\n| strategy |";
    for (const auto& t : s["threads"]) md += fmt::format(" {} threads |", t.get<int>());
    md += "\n|---|";
    for (size_t i = 0; i < s["threads"].size(); ++i) md += "---|";
    md += "\n";
    for (const auto& f : s["first_failure"]) {
      md += "| " + f["strategy"].get<std::string>() + " |";
      for (const auto& t : s["threads"]) {
        std::string cell = " ";
        for (const auto& c2 : f["cells"]) {
          if (c2["threads"] != t) continue;
          const int64_t ff = c2["first_failure_trial"].get<int64_t>();
          cell += ff > 0 ? fmt::format("{} ", ff) : fmt::format("none in {} ", c2["trials"].get<int64_t>());
        }
        md += cell + "|";
      }
      md += "\n";
    }
    const auto& tl = s["timeline"];
    if (!tl.is_null()) {
      md += fmt::format("\nMinimised failing schedule ({} under `{}`, {}, {} threads): `{}`", tl["outcome"].get<std::string>(),
                        tl["mitigation"].get<std::string>(), tl["strategy"].get<std::string>(), tl["threads"].get<int>(),
                        tl["schedule_file"].get<std::string>());
      if (!tl["schedule"].is_null())
        md += fmt::format(", {} preemptions (minimised from {}), failing step {}.\n",
                          tl["schedule"].value("preemptions", 0), tl["schedule"].value("minimized_from_preemptions", 0),
                          tl["schedule"].value("outcome", json::object()).value("failing_step", -1));
      else
        md += ".\n";
      if (!tl["detail"].get<std::string>().empty()) md += "\n> " + md_escape(tl["detail"].get<std::string>()) + "\n";
      if (!tl["compact"].get<std::string>().empty()) md += "\nReplay: `" + tl["compact"].get<std::string>() + "`\n";
    }
  }
  if (!c["warnings"].empty()) {
    md += "\n## Warnings\n\n";
    for (const auto& w : c["warnings"]) md += "- " + w.get<std::string>() + "\n";
  }
  return md;
}

std::string render_junit(const json& report) {
  const auto& e = report["expectations"];
  std::string body;
  for (const auto& s : report["scenarios"]) {
    int64_t tests = 0, failures = 0;
    double time = 0;
    std::string cases;
    for (const auto& m : s["mitigations"]) {
      ++tests;
      const auto& chk = m["check"];
      double wall = 0;
      for (const auto& c : s["cells"])
        if (c["mitigation"] == m["name"]) wall += c.value("wall_s", 0.0);
      time += wall;
      std::string text;
      for (const auto& cl : chk["clauses"])
        text += fmt::format("{}: {} -- {}\n", cl["clause"].get<std::string>(), cl["status"].get<std::string>(),
                            cl["measured"].get<std::string>());
      if (!chk["why"].get<std::string>().empty()) text += "why: " + chk["why"].get<std::string>() + "\n";
      const std::string grounds = m.value("grounds", json::object()).value("text", "");
      if (!grounds.empty()) text += m["verdict"].get<std::string>() + ", resting on: " + grounds + "\n";
      if (m.contains("cost") && !m["cost"].is_null())
        text += fmt::format("cost: {} {}, relative to {}: {} ({})\n", m["cost"]["metric"].get<std::string>(),
                            cost_value_text(m["cost"]), m["cost"]["ideal"].get<std::string>(),
                            cost_relative_text(m["cost"]), m["cost"].value("comparison", std::string("—")));
      cases += fmt::format("    <testcase classname=\"racelab.{}\" name=\"{}: {}\" time=\"{:.3f}\">\n",
                           xml_escape(s["name"].get<std::string>()), xml_escape(m["name"].get<std::string>()), xml_escape(chk["describe"].get<std::string>()), wall);
      const std::string status = chk["status"].get<std::string>();
      if (status != "pass") {
        ++failures;
        std::string first;
        for (const auto& cl : chk["clauses"])
          if (cl["status"] != "pass" && first.empty()) first = cl["clause"].get<std::string>() + ": " + cl["measured"].get<std::string>();
        cases += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                             status == "fail" ? "expectation" : "incomplete", xml_escape(first), xml_escape(text));
      }
      cases += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(text));
    }
    body += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"{:.3f}\">\n{}  </testsuite>\n",
                        xml_escape(s["name"].get<std::string>()), tests, failures, time, cases);
  }
  body += beside_model_junit(report);
  int64_t beside_tests = 0, beside_failures = 0;
  if (report.contains("beside_model")) {
    const auto& t = report["beside_model"]["totals"];
    beside_tests = t.value("total", 0) - t.value("not_modelled", 0);
    beside_failures = t.value("disagree", 0) + t.value("stale", 0) + t.value("incomplete", 0);
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"racelab\" tests=\"{}\" failures=\"{}\" "
                     "time=\"{:.3f}\">\n{}</testsuites>\n",
                     e["total"].get<int64_t>() + beside_tests,
                     e["failed"].get<int64_t>() + e["incomplete"].get<int64_t>() + beside_failures,
                     report["campaign"]["wall_s"].get<double>(), body);
}

}  // namespace racelab::reports
