// reports/beside_model.cpp -- see beside_model.h.
#include "reports/beside_model.h"

#include <fmt/format.h>

#include "reports/xml_escape.h"

namespace racelab::reports {

using nlohmann::json;

namespace {

const json* find_by_name(const json& list, const std::string& name) {
  for (const auto& x : list)
    if (x.value("name", "") == name) return &x;
  return nullptr;
}

std::string verdict_of(const json& scenario, const std::string& mitigation) {
  const json* m = find_by_name(scenario.at("mitigations"), mitigation);
  return m ? m->value("verdict", std::string("no data")) : std::string("not swept");
}

std::string agreement(const std::string& model, const std::string& torch, bool listed) {
  if (model == "not swept") return "not modelled";
  if (model == "no data" || torch == "no data") return "incomplete";
  if (model == torch) return listed ? "stale" : "agree";
  return listed ? "explained" : "disagree";
}

const char* mark(const std::string& agreement) {
  if (agreement == "agree") return "✔";
  if (agreement == "explained") return "≠ (explained)";
  if (agreement == "disagree") return "✘ disagree";
  if (agreement == "stale") return "✘ listed as a disagreement, but agrees";
  if (agreement == "incomplete") return "…";
  return "—";
}

std::string md_cell(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s;
}

}  // namespace

json beside_model_json(const json& report_scenarios, const json& documents, const json& torch_by_scenario) {
  json pairs = json::array();
  json totals = {{"total", 0}, {"agree", 0},      {"explained", 0},   {"disagree", 0},
                 {"stale", 0}, {"incomplete", 0}, {"not_modelled", 0}};
  for (const auto& s : report_scenarios) {
    const std::string name = s.at("name").get<std::string>();
    if (!documents.contains(name) || !documents[name].contains("model")) continue;
    const json& twin = documents[name]["model"];
    const std::string model_name = twin.at("scenario").get<std::string>();
    const json* model = find_by_name(report_scenarios, model_name);
    if (model == nullptr) continue;  // the campaign did not run the model's side
    const json known = twin.value("known_disagreements", json::object());
    json rows = json::array();
    int agree = 0, compared = 0, explained = 0, disagree = 0;
    for (const auto& m : s.at("mitigations")) {
      const std::string mit = m.at("name").get<std::string>();
      const std::string mv = verdict_of(*model, mit), tv = m.value("verdict", std::string("no data"));
      const std::string a = agreement(mv, tv, known.contains(mit));
      totals["total"] = totals["total"].get<int>() + 1;
      const std::string key = a == "not modelled" ? "not_modelled" : a;
      totals[key] = totals[key].get<int>() + 1;
      if (a != "not modelled" && a != "incomplete") ++compared;
      if (a == "agree") ++agree;
      if (a == "explained") ++explained;
      if (a == "disagree" || a == "stale") ++disagree;
      rows.push_back({{"mitigation", mit},
                      {"model", mv},
                      {"pytorch", tv},
                      {"agreement", a},
                      {"why", known.contains(mit) ? known[mit].get<std::string>() : std::string()}});
    }
    const std::string torch = torch_by_scenario.value(name, std::string("unknown"));
    pairs.push_back({{"scenario", name},
                     {"model_scenario", model_name},
                     {"race", s.value("race", name)},
                     {"torch", torch},
                     {"rows", rows},
                     {"summary", fmt::format("model and torch {} agree on {} of {} mitigations; {} explained "
                                             "disagreement{}, {} unexplained",
                                             torch, agree, compared, explained, explained == 1 ? "" : "s", disagree)}});
  }
  return {{"pairs", pairs}, {"totals", totals}};
}

bool beside_model_passes(const json& report, bool strict) {
  if (!report.contains("beside_model")) return true;
  const auto& t = report["beside_model"]["totals"];
  return t.value("disagree", 0) == 0 && t.value("stale", 0) == 0 && (!strict || t.value("incomplete", 0) == 0);
}

std::string beside_model_markdown(const json& report) {
  if (!report.contains("beside_model") || report["beside_model"]["pairs"].empty()) return "";
  std::string md = "\n## Model beside real torch\n\nEach row: the model's verdict and real torch's for one "
                   "mitigation (fails: some trial failed; holds: none did). A disagreement not listed in the "
                   "scenario's `model.known_disagreements` is a finding and fails the campaign.\n";
  for (const auto& p : report["beside_model"]["pairs"]) {
    md += fmt::format("\n### {} (`{}` beside the model's `{}`)\n\n{}.\n\n| mitigation | model | torch {} | agreement "
                      "| why |\n|---|---|---|---|---|\n",
                      md_cell(p["race"].get<std::string>()), p["scenario"].get<std::string>(),
                      p["model_scenario"].get<std::string>(), p["summary"].get<std::string>(),
                      p["torch"].get<std::string>());
    for (const auto& r : p["rows"])
      md += fmt::format("| {} | {} | {} | {} | {} |\n", r["mitigation"].get<std::string>(),
                        r["model"].get<std::string>(), r["pytorch"].get<std::string>(),
                        mark(r["agreement"].get<std::string>()), md_cell(r["why"].get<std::string>()));
  }
  return md;
}

std::string beside_model_html(const json& report) {
  if (!report.contains("beside_model") || report["beside_model"]["pairs"].empty()) return "";
  std::string h = "<h2 id=\"beside-model\">Model beside real torch</h2>\n<p class=\"small\">Each row: the model's "
                  "verdict and real torch's for one mitigation. A disagreement not listed in the scenario's "
                  "<code>model.known_disagreements</code> is a finding and fails the campaign.</p>\n";
  for (const auto& p : report["beside_model"]["pairs"]) {
    h += fmt::format("<h3>{} (<code>{}</code> beside the model's <code>{}</code>)</h3>\n<p>{}.</p>\n"
                     "<table class=\"beside-model\"><tr><th>mitigation</th><th>model</th><th>torch {}</th>"
                     "<th>agreement</th><th>why</th></tr>\n",
                     xml_escape(p["race"].get<std::string>()), xml_escape(p["scenario"].get<std::string>()),
                     xml_escape(p["model_scenario"].get<std::string>()), xml_escape(p["summary"].get<std::string>()),
                     xml_escape(p["torch"].get<std::string>()));
    for (const auto& r : p["rows"]) {
      const std::string a = r["agreement"].get<std::string>();
      const char* cls = a == "agree" ? "pass" : (a == "disagree" || a == "stale") ? "fail" : "incomplete";
      auto verdict_td = [](const std::string& v) {
        const char* c = v == "fails" ? "fails" : v == "holds" ? "holds" : "nodata";
        return fmt::format("<td class=\"{}\">{}</td>", c, xml_escape(v));
      };
      h += fmt::format("<tr><th>{}</th>{}{}<td class=\"{}\">{}</td><td class=\"small\">{}</td></tr>\n",
                       xml_escape(r["mitigation"].get<std::string>()), verdict_td(r["model"].get<std::string>()),
                       verdict_td(r["pytorch"].get<std::string>()), cls, xml_escape(mark(a)),
                       xml_escape(r["why"].get<std::string>()));
    }
    h += "</table>\n";
  }
  return h;
}

std::string beside_model_junit(const json& report) {
  if (!report.contains("beside_model")) return "";
  std::string out;
  for (const auto& p : report["beside_model"]["pairs"]) {
    std::string cases;
    int tests = 0, failures = 0;
    for (const auto& r : p["rows"]) {
      const std::string a = r["agreement"].get<std::string>();
      if (a == "not modelled") continue;
      ++tests;
      const std::string text = fmt::format("model: {}; torch {}: {}; {}{}", r["model"].get<std::string>(),
                                           p["torch"].get<std::string>(), r["pytorch"].get<std::string>(), a,
                                           r["why"].get<std::string>().empty() ? "" : " -- " + r["why"].get<std::string>());
      cases += fmt::format("    <testcase classname=\"racelab.beside_model.{}\" name=\"{}: model agrees with torch\">\n",
                           xml_escape(p["scenario"].get<std::string>()), xml_escape(r["mitigation"].get<std::string>()));
      if (a == "disagree" || a == "stale" || a == "incomplete") {
        ++failures;
        cases += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                             a == "incomplete" ? "incomplete" : "disagreement", xml_escape(text), xml_escape(text));
      }
      cases += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(text));
    }
    out += fmt::format("  <testsuite name=\"beside_model.{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" "
                       "time=\"0\">\n{}  </testsuite>\n",
                       xml_escape(p["scenario"].get<std::string>()), tests, failures, cases);
  }
  return out;
}

}  // namespace racelab::reports
