// build_report(): aggregation, Wilson intervals, expectation checks, cost and
// the timeline choice. Everything a renderer shows is decided here.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "engine/driver.h"
#include "engine/outcome.h"
#include "reports/campaign/matrix.h"
#include "reports/campaign/scenario.h"
#include "reports/report.h"
#include "reports/stats.h"

namespace racelab::reports {
namespace {

using nlohmann::json;

// (scenario, mitigation, threads, strategy, seed): one cell of the matrix.
using CellKey = std::tuple<std::string, std::string, int, std::string, uint64_t>;

struct CellStats {
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  int64_t first_failure = -1;  // 1-based position among the cell's trials
  std::string first_schedule;
  double metric_sum = 0;
  int64_t metric_n = 0;
  double wall_ms = 0;
  const json* summary = nullptr;  // the "cell" line, once finished
};

const std::vector<std::string>& canonical_mitigations() {
  static const std::vector<std::string> order = {"none",           "lock_first_call", "compile_lock_only",
                                                 "global_lock",    "rw_lock",         "precompile",
                                                 "isolate_thread", "isolate_process", "disable_check"};
  return order;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json interval_json(int64_t failures, int64_t trials) {
  const Interval w = wilson_interval(failures, trials);
  return json::array({w.low, w.high});
}

double rate_of(int64_t failures, int64_t trials) { return trials > 0 ? double(failures) / double(trials) : 0.0; }

struct Clause {
  std::string name, status, measured;  // status: pass | fail | incomplete
};

// The cells of `s` that expectation `e` covers, as planned at this scale.
std::vector<CellKey> matched_cells(const Scenario& s, const Expectation& e, const std::vector<PlannedCell>& plan) {
  std::vector<CellKey> out;
  for (const auto& c : plan)
    if (c.spec.scenario == s.name && c.spec.mitigation == e.mitigation && e.matches(c.spec.strategy, c.spec.threads))
      out.push_back({s.name, e.mitigation, c.spec.threads, c.spec.strategy, c.spec.seed});
  return out;
}

std::string cell_label(const CellKey& k) {
  return fmt::format("{} threads, {}, seed {}", std::get<2>(k), std::get<3>(k), std::get<4>(k));
}

json check_expectation(const Scenario& s, const Expectation& e, const std::vector<PlannedCell>& plan,
                       const std::map<CellKey, CellStats>& stats, double scale) {
  const auto cells = matched_cells(s, e, plan);
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  bool all_done = true;
  for (const auto& k : cells) {
    auto it = stats.find(k);
    if (it == stats.end() || !it->second.summary || it->second.summary->value("interrupted", false)) all_done = false;
    if (it == stats.end()) continue;
    trials += it->second.trials;
    failures += it->second.failures;
    for (const auto& [o, n] : it->second.by_outcome) by_outcome[o] += n;
  }
  std::vector<Clause> clauses;
  if (e.reproduces_within > 0) {
    Clause c{fmt::format("reproduces_within {}", e.reproduces_within), "pass", ""};
    std::vector<std::string> late, pending;
    int64_t worst = 0;
    for (const auto& k : cells) {
      auto it = stats.find(k);
      const bool done = it != stats.end() && it->second.summary && !it->second.summary->value("interrupted", false);
      if (it != stats.end() && it->second.first_failure > 0 && it->second.first_failure <= e.reproduces_within) {
        worst = std::max(worst, it->second.first_failure);
      } else if (done || (it != stats.end() && it->second.trials >= e.reproduces_within)) {
        late.push_back(cell_label(k) + (it->second.first_failure > 0
                                            ? fmt::format(" (first failure at trial {})", it->second.first_failure)
                                            : fmt::format(" (no failure in {} trials)", it->second.trials)));
      } else {
        pending.push_back(cell_label(k));
      }
    }
    if (!late.empty()) {
      c.status = "fail";
      c.measured = fmt::format("did not reproduce within {} in {} of {} cells: {}", e.reproduces_within, late.size(),
                               cells.size(), fmt::join(late, "; "));
    } else if (!pending.empty()) {
      c.status = "incomplete";
      c.measured = fmt::format("{} of {} cells not run yet", pending.size(), cells.size());
    } else {
      c.measured = fmt::format("every one of {} cells failed by trial {}", cells.size(), worst);
    }
    clauses.push_back(c);
  }
  if (e.holds_over > 0) {
    const int64_t needed = scaled_count(e.holds_over, scale);
    Clause c{fmt::format("holds_over {}", e.holds_over), "pass", ""};
    if (failures > 0) {
      std::vector<std::string> classes;
      for (const auto& [o, n] : by_outcome)
        if (is_failure(o)) classes.push_back(fmt::format("{} {}", n, o));
      c.status = "fail";
      c.measured = fmt::format("{} failures in {} trials ({})", failures, trials, fmt::join(classes, ", "));
    } else if (trials < needed) {
      c.status = all_done ? "fail" : "incomplete";
      c.measured = fmt::format("0 failures, but only {} of the {} trials needed{}", trials, needed,
                               all_done ? " ran within the time budgets" : " so far");
    } else {
      c.measured = fmt::format("0 failures in {} trials (needed {})", trials, needed);
    }
    clauses.push_back(c);
  }
  if (!e.outcome.empty() || !e.allowed.empty()) {
    std::set<std::string> ok(e.allowed.begin(), e.allowed.end());
    if (!e.outcome.empty()) ok.insert(e.outcome);
    std::vector<std::string> stray;
    for (const auto& [o, n] : by_outcome)
      if (is_failure(o) && !ok.count(o)) stray.push_back(fmt::format("{} {}", n, o));
    const std::string name = !e.outcome.empty() ? "outcome " + e.outcome : "";
    Clause c{name.empty() ? fmt::format("allowed {}", fmt::join(e.allowed, "|"))
                          : name + (e.allowed.empty() ? "" : fmt::format(" (allowed {})", fmt::join(e.allowed, "|"))),
             "pass", ""};
    const int64_t hits = e.outcome.empty() ? 0 : (by_outcome.count(e.outcome) ? by_outcome.at(e.outcome) : 0);
    if (!stray.empty()) {
      c.status = "fail";
      c.measured = fmt::format("unexpected failure classes: {}", fmt::join(stray, ", "));
    } else if (!e.outcome.empty() && hits == 0) {
      c.status = all_done ? "fail" : "incomplete";
      c.measured = fmt::format("no {} in {} trials", e.outcome, trials);
    } else {
      c.measured = e.outcome.empty() ? fmt::format("{} failures, all allowed", failures)
                                     : fmt::format("{} {} in {} trials", hits, e.outcome, trials);
    }
    clauses.push_back(c);
  }
  if (e.max_rate >= 0) {
    Clause c{fmt::format("max_rate {}", e.max_rate), "pass", ""};
    const double r = rate_of(failures, trials);
    c.measured = fmt::format("rate {:.3f} ({} of {})", r, failures, trials);
    if (trials == 0 || !all_done) c.status = "incomplete";
    if (trials > 0 && all_done && r > e.max_rate) c.status = "fail";
    clauses.push_back(c);
  }
  std::string status = "pass";
  json cj = json::array();
  for (const auto& c : clauses) {
    if (c.status == "fail") status = "fail";
    else if (c.status == "incomplete" && status == "pass") status = "incomplete";
    cj.push_back({{"clause", c.name}, {"status", c.status}, {"measured", c.measured}});
  }
  return {{"status", status},
          {"expectation", e.source},
          {"describe", e.describe()},
          {"why", e.why},
          {"clauses", cj},
          {"cells", cells.size()},
          {"trials", trials},
          {"failures", failures}};
}

json load_schedule(const std::string& path, std::string* why) {
  std::ifstream in(path);
  if (!in) {
    *why = "schedule file " + path + " is not readable";
    return nullptr;
  }
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("format", "") != "racelab-schedule") {
    *why = "schedule file " + path + " is not a racelab schedule";
    return nullptr;
  }
  return j;
}

}  // namespace

std::string minimized_schedule_path(const std::string& schedule_file) {
  const std::string ext = ".json";
  if (schedule_file.size() > ext.size() && schedule_file.compare(schedule_file.size() - ext.size(), ext.size(), ext) == 0)
    return schedule_file.substr(0, schedule_file.size() - ext.size()) + ".min.json";
  return schedule_file + ".min.json";
}

nlohmann::json build_report(const ResultsData& data) {
  // --- campaign identity: every merged file must agree on how it was planned.
  double scale = 1.0;
  std::string mode = "compare";
  std::vector<Scenario> scenarios;
  std::set<std::string> names;
  json shards = json::array();
  for (size_t i = 0; i < data.headers.size(); ++i) {
    const auto& h = data.headers[i];
    if (i == 0) {
      scale = h.value("budget_scale", 1.0);
      mode = h.value("mode", "compare");
    } else if (h.value("budget_scale", 1.0) != scale || h.value("mode", "compare") != mode) {
      throw std::runtime_error(fmt::format(
          "cannot merge: shard {} ran with budget scale {} in {} mode, but shard {} with {} in {} mode",
          h.value("shard", json()).dump(), h.value("budget_scale", 1.0), h.value("mode", "?"),
          data.headers[0].value("shard", json()).dump(), scale, mode));
    }
    shards.push_back(h.value("shard", json::array({1, 1})));
    for (const auto& doc : h.value("scenarios", json::array())) {
      const std::string file = doc.value("__file", doc.value("name", "?"));
      json clean = doc;
      clean.erase("__file");
      if (!names.insert(clean.value("name", "")).second) continue;
      auto problems = validate_scenario(clean, file);
      if (!problems.empty()) throw std::runtime_error("results header: " + problems.front().to_string());
      scenarios.push_back(parse_scenario(clean, file));
    }
  }
  PlanOptions popts;
  popts.budget_scale = scale;
  popts.ci = (mode == "ci");
  const auto plan = plan_cells(scenarios, popts);

  // --- per-cell statistics, from the trial records themselves so a partial
  // (killed) campaign reports every trial that finished.
  std::map<CellKey, CellStats> stats;
  std::map<std::string, const Scenario*> by_name;
  for (const auto& s : scenarios) by_name[s.name] = &s;
  for (size_t ti = 0; ti < data.trials.size(); ++ti) {
    const TrialRecord& r = data.trials[ti];
    const uint64_t cell_seed = ti < data.cell_seeds.size() ? data.cell_seeds[ti] : r.seed;
    auto& c = stats[{r.scenario, r.mitigation, r.threads, r.strategy, cell_seed}];
    ++c.trials;
    ++c.by_outcome[r.outcome];
    c.wall_ms += r.wall_ms;
    if (is_failure(r.outcome)) {
      ++c.failures;
      if (c.first_failure < 0) {
        c.first_failure = c.trials;
        c.first_schedule = r.schedule_file;
      }
    }
    auto sit = by_name.find(r.scenario);
    const std::string metric = sit != by_name.end() ? sit->second->cost.metric : "steps_per_s";
    if (r.metrics.is_object() && r.metrics.contains(metric) && r.metrics[metric].is_number()) {
      c.metric_sum += r.metrics[metric].get<double>();
      ++c.metric_n;
    }
  }
  for (const auto& cl : data.cells)
    stats[{cl.value("scenario", ""), cl.value("mitigation", ""), cl.value("threads", 0), cl.value("strategy", ""),
           cl.value("seed", uint64_t{0})}]
        .summary = &cl;

  // --- campaign totals.
  bool interrupted = data.ends.size() < data.headers.size();
  double wall_s = 0;
  for (const auto& e : data.ends) {
    interrupted |= e.value("interrupted", false);
    wall_s = std::max(wall_s, e.value("wall_s", 0.0));
  }
  int64_t cells_done = 0;
  for (const auto& c : plan) {
    auto it = stats.find({c.spec.scenario, c.spec.mitigation, c.spec.threads, c.spec.strategy, c.spec.seed});
    if (it != stats.end() && it->second.summary && !it->second.summary->value("interrupted", false)) ++cells_done;
  }

  json report = {{"format", kReportFormat},
                 {"version", kReportVersion},
                 {"racelab_version", RACELAB_VERSION},
                 {"generated", now_utc()},
                 {"campaign",
                  {{"mode", mode},
                   {"budget_scale", scale},
                   {"shards", shards},
                   {"interrupted", interrupted},
                   {"cells_planned", plan.size()},
                   {"cells_done", cells_done},
                   {"complete", cells_done == static_cast<int64_t>(plan.size())},
                   {"trials", data.trials.size()},
                   {"wall_s", wall_s},
                   {"warnings", data.warnings}}}};

  int64_t total = 0, passed = 0, failed = 0, incomplete = 0;
  json sj = json::array();
  for (const auto& s : scenarios) {
    json cells = json::array();
    for (const auto& c : plan) {
      if (c.spec.scenario != s.name) continue;
      const CellKey k{s.name, c.spec.mitigation, c.spec.threads, c.spec.strategy, c.spec.seed};
      auto it = stats.find(k);
      const CellStats empty;
      const CellStats& st = it == stats.end() ? empty : it->second;
      json cj = {{"mitigation", c.spec.mitigation},
                 {"threads", c.spec.threads},
                 {"strategy", c.spec.strategy},
                 {"seed", c.spec.seed},
                 {"max_trials", c.spec.max_trials},
                 {"trials", st.trials},
                 {"failures", st.failures},
                 {"rate", rate_of(st.failures, st.trials)},
                 {"wilson", interval_json(st.failures, st.trials)},
                 {"by_outcome", st.by_outcome},
                 {"first_failure_trial", st.first_failure},
                 {"first_failure_schedule", st.first_schedule},
                 {"trial_ms", st.trials ? st.wall_ms / double(st.trials) : 0.0},
                 {"metric", st.metric_n ? json(st.metric_sum / double(st.metric_n)) : json(nullptr)},
                 {"status", st.summary ? (st.summary->value("interrupted", false) ? "interrupted" : "done")
                                       : (st.trials ? "partial" : "not run")}};
      if (st.summary) {
        cj["exhausted"] = st.summary->value("exhausted", false);
        cj["pct_floor"] = st.summary->value("pct_floor", 0.0);
        cj["wall_s"] = st.summary->value("wall_s", 0.0);
      }
      cells.push_back(cj);
    }

    // Per mitigation: the verdict over all its cells, and its expectation.
    json mj = json::array();
    std::map<std::pair<std::string, int>, double> metric_by;  // (mitigation, threads) -> mean metric
    {
      std::map<std::pair<std::string, int>, std::pair<double, int>> sums;  // over seeds
      for (const auto& cj : cells)
        if (cj["strategy"] == s.cost.strategy && !cj["metric"].is_null()) {
          auto& v = sums[{cj["mitigation"].get<std::string>(), cj["threads"].get<int>()}];
          v.first += cj["metric"].get<double>();
          ++v.second;
        }
      for (const auto& [k, v] : sums) metric_by[k] = v.first / v.second;
    }
    for (const auto& e : s.expectations) {
      int64_t trials = 0, failures = 0;
      std::map<std::string, int64_t> by_outcome;
      for (const auto& cj : cells) {
        if (cj["mitigation"] != e.mitigation) continue;
        trials += cj["trials"].get<int64_t>();
        failures += cj["failures"].get<int64_t>();
        for (auto it = cj["by_outcome"].begin(); it != cj["by_outcome"].end(); ++it)
          by_outcome[it.key()] += it.value().get<int64_t>();
      }
      json check = check_expectation(s, e, plan, stats, scale);
      ++total;
      const std::string st = check["status"];
      (st == "pass" ? passed : st == "fail" ? failed : incomplete)++;
      std::vector<std::string> classes;
      for (const auto& [o, n] : by_outcome)
        if (is_failure(o)) classes.push_back(o);
      // Cost: metric relative to the ideal mitigation at the same thread count.
      json cost = nullptr;
      std::vector<double> rel;
      json per_threads = json::object();
      double absolute = 0;
      int n_abs = 0;
      for (int t : s.threads) {
        auto a = metric_by.find({e.mitigation, t});
        auto b = metric_by.find({s.cost.ideal, t});
        if (a == metric_by.end()) continue;
        absolute += a->second;
        ++n_abs;
        if (b != metric_by.end() && b->second > 0) {
          rel.push_back(a->second / b->second);
          per_threads[std::to_string(t)] = a->second / b->second;
        }
      }
      if (n_abs) {
        double mean_rel = 0;
        for (double r : rel) mean_rel += r;
        cost = {{"metric", s.cost.metric},
                {"value", absolute / n_abs},
                {"relative", rel.empty() ? json(nullptr) : json(mean_rel / double(rel.size()))},
                {"relative_by_threads", per_threads},
                {"ideal", s.cost.ideal}};
      }
      mj.push_back({{"name", e.mitigation},
                    {"trials", trials},
                    {"failures", failures},
                    {"rate", rate_of(failures, trials)},
                    {"wilson", interval_json(failures, trials)},
                    {"by_outcome", by_outcome},
                    {"verdict", trials == 0 ? "no data" : failures ? "fails" : "holds"},
                    {"failure_classes", classes},
                    {"check", check},
                    {"cost", cost}});
    }

    // Trials to the first failure per strategy and thread count, in the most
    // failing-prone mitigation ("none" when swept): how fast each strategy finds it.
    const std::string baseline = std::find(s.mitigations.begin(), s.mitigations.end(), "none") != s.mitigations.end()
                                     ? "none"
                                     : s.mitigations.front();
    json ff = json::array();
    for (const auto& b : s.strategies) {
      json per = json::array();
      for (const auto& cj : cells) {
        if (cj["mitigation"] != baseline || cj["strategy"] != b.strategy) continue;
        per.push_back({{"threads", cj["threads"]},
                       {"seed", cj["seed"]},
                       {"first_failure_trial", cj["first_failure_trial"]},
                       {"trials", cj["trials"]},
                       {"rate", cj["rate"]},
                       {"pct_floor", cj.value("pct_floor", 0.0)}});
      }
      ff.push_back({{"strategy", b.strategy}, {"mitigation", baseline}, {"cells", per}});
    }

    // The timeline: the shortest failing schedule (fewest preemptions, then
    // steps), preferring the baseline mitigation and controlled strategies.
    json timeline = nullptr;
    const TrialRecord* best = nullptr;
    auto rank = [&](const TrialRecord& r) {
      return std::make_tuple(r.mitigation != baseline, is_free_running(r.strategy), r.preemptions, r.steps);
    };
    for (const auto& r : data.trials)
      if (r.scenario == s.name && is_failure(r.outcome) && !r.schedule_file.empty() &&
          (!best || rank(r) < rank(*best)))
        best = &r;
    if (best) {
      std::string why;
      const std::string min_path = minimized_schedule_path(best->schedule_file);
      const bool minimized = std::ifstream(min_path).good();
      json sched = load_schedule(minimized ? min_path : best->schedule_file, &why);
      timeline = {{"schedule_file", minimized ? min_path : best->schedule_file},
                  {"original_schedule_file", best->schedule_file},
                  {"minimized", minimized},
                  {"mitigation", best->mitigation},
                  {"strategy", best->strategy},
                  {"threads", best->threads},
                  {"outcome", best->outcome},
                  {"detail", best->detail},
                  {"compact", best->compact},
                  {"schedule", sched}};
      if (sched.is_null()) timeline["problem"] = why;
    }

    sj.push_back({{"name", s.name},
                  {"race", s.race},
                  {"description", s.description},
                  {"file", s.file},
                  {"workload", s.workload},
                  {"knobs", s.knobs},
                  {"threads", s.threads},
                  {"strategies", [&] {
                     json a = json::array();
                     for (const auto& b : s.strategies) a.push_back(b.strategy);
                     return a;
                   }()},
                  {"cost_spec", {{"metric", s.cost.metric}, {"ideal", s.cost.ideal}, {"strategy", s.cost.strategy}}},
                  {"mitigations", mj},
                  {"first_failure", ff},
                  {"cells", cells},
                  {"timeline", timeline}});
  }
  report["scenarios"] = sj;
  report["expectations"] = {{"total", total}, {"passed", passed}, {"failed", failed}, {"incomplete", incomplete}};

  // The verdict table: mitigation rows in the canonical order, race columns.
  std::vector<std::string> rows;
  for (const auto& m : canonical_mitigations())
    for (const auto& s : scenarios)
      if (std::find(s.mitigations.begin(), s.mitigations.end(), m) != s.mitigations.end()) {
        rows.push_back(m);
        break;
      }
  for (const auto& s : scenarios)
    for (const auto& m : s.mitigations)
      if (std::find(rows.begin(), rows.end(), m) == rows.end()) rows.push_back(m);
  report["verdict_table"] = {{"mitigations", rows}};
  return report;
}

bool all_expectations_pass(const nlohmann::json& report) {
  const auto& e = report.at("expectations");
  return e.value("failed", 1) == 0 && e.value("incomplete", 1) == 0 && e.value("total", 0) > 0;
}

}  // namespace racelab::reports
