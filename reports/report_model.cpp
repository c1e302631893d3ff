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
#include "engine/trial_plan.h"
#include "engine/outcome.h"
#include "reports/beside_model.h"
#include "campaign/matrix.h"
#include "campaign/minimize_timelines.h"
#include "campaign/scenario.h"
#include "reports/cell_stats.h"
#include "reports/expectation_check.h"
#include "reports/grounds.h"
#include "reports/report.h"
#include "reports/stats.h"

namespace racelab::reports {

using namespace racelab::campaign;
namespace {

using nlohmann::json;

// A metric over pooled trials.
struct Measure {
  double mean = 0, sd = NAN;  // sd: NaN below two trials
  int64_t n = 0;
};

// The sample standard deviation, null below two values.
json sample_sd(const std::vector<double>& v) {
  if (v.size() < 2) return nullptr;
  double mean = 0, ss = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
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

// What the results files' headers say about the campaign. Every merged file
// must agree on how it was planned.
struct Campaign {
  double scale = 1.0;
  std::string mode = "compare";
  std::string libtorch;  // the LibTorch version every shard ran on ("" in old results)
  std::string torch;     // the Python torch every shard ran against ("" for none)
  std::vector<Scenario> scenarios;
  json mitigations = json::array();  // the header's [{"name", "group"}], display order
  json shards = json::array();
  std::vector<PlannedCell> plan;
};

Campaign read_campaign(const ResultsData& data) {
  Campaign c;
  std::set<std::string> names;
  for (size_t i = 0; i < data.headers.size(); ++i) {
    const auto& h = data.headers[i];
    if (i == 0) {
      c.scale = h.value("budget_scale", 1.0);
      c.mode = h.value("mode", "compare");
      c.libtorch = h.value("libtorch", "");
      c.torch = h.value("torch", "");
    } else if (h.value("torch", "") != c.torch) {
      // Expectations and the model's knobs depend on the torch version too.
      throw std::runtime_error(fmt::format("cannot merge: shard {} ran against torch {}, but shard {} against {}",
                                           h.value("shard", json()).dump(), h.value("torch", "?"),
                                           data.headers[0].value("shard", json()).dump(),
                                           c.torch.empty() ? "none" : c.torch));
    } else if (h.value("libtorch", "") != c.libtorch) {
      // Expectations depend on the LibTorch version; one report cannot judge two.
      throw std::runtime_error(fmt::format("cannot merge: shard {} ran on LibTorch {}, but shard {} on {}",
                                           h.value("shard", json()).dump(), h.value("libtorch", "?"),
                                           data.headers[0].value("shard", json()).dump(), c.libtorch));
    } else if (h.value("budget_scale", 1.0) != c.scale || h.value("mode", "compare") != c.mode) {
      throw std::runtime_error(fmt::format(
          "cannot merge: shard {} ran with budget scale {} in {} mode, but shard {} with {} in {} mode",
          h.value("shard", json()).dump(), h.value("budget_scale", 1.0), h.value("mode", "?"),
          data.headers[0].value("shard", json()).dump(), c.scale, c.mode));
    }
    c.shards.push_back(h.value("shard", json::array({1, 1})));
    if (c.mitigations.empty() && h.contains("mitigations") && h["mitigations"].is_array())
      c.mitigations = h["mitigations"];
    for (const auto& doc : h.value("scenarios", json::array())) {
      const std::string file = doc.value("__file", doc.value("name", "?"));
      json clean = doc;
      clean.erase("__file");
      if (!names.insert(clean.value("name", "")).second) continue;
      auto problems = validate_scenario(clean, file);
      if (!problems.empty()) throw std::runtime_error("results header: " + problems.front().to_string());
      c.scenarios.push_back(parse_scenario(clean, file, c.libtorch, c.torch));
    }
  }
  PlanOptions popts;
  popts.budget_scale = c.scale;
  popts.ci = (c.mode == "ci");
  c.plan = plan_cells(c.scenarios, popts);
  return c;
}

// Per-cell statistics, from the trial records themselves so a partial
// (killed) campaign reports every trial that finished.
std::map<CellKey, CellStats> gather_cells(const ResultsData& data, const std::vector<Scenario>& scenarios) {
  std::map<CellKey, CellStats> stats;
  std::map<std::string, const Scenario*> by_name;
  for (const auto& s : scenarios) by_name[s.name] = &s;
  // Each cell's trials in index order: a cell dealt over shards comes back
  // file by file, and its first failure is its lowest failing index.
  std::vector<size_t> order(data.trials.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return data.trials[a].trial < data.trials[b].trial; });
  for (size_t ti : order) {
    const TrialRecord& r = data.trials[ti];
    const uint64_t cell_seed = ti < data.cell_seeds.size() ? data.cell_seeds[ti] : r.seed;
    auto& c = stats[{r.scenario, r.mitigation, r.threads, r.strategy, cell_seed}];
    ++c.by_outcome[r.outcome];
    // Killed from outside beyond its retries: says nothing about the
    // mitigation, so it is neither a trial that held nor one that failed.
    if (!is_conclusive(r.outcome)) continue;
    ++c.trials;
    c.wall_ms += r.wall_ms;
    if (r.metrics.is_object()) {
      bool phases = false;
      for (const auto& [k, v] : r.metrics.items())
        if (k.rfind("cpu_ms.", 0) == 0 && v.is_number()) c.cpu_ms[k.substr(7)] += v.get<double>(), phases = true;
      c.cpu_n += phases ? 1 : 0;
      if (r.metrics.contains("wall_seconds") && r.metrics["wall_seconds"].is_number()) {
        c.body_ms += 1000.0 * r.metrics["wall_seconds"].get<double>();
        ++c.body_n;
      }
    }
    const bool via_arm = r.metrics.is_object() && r.metrics.contains("strategy_used") &&
                         r.metrics["strategy_used"].is_string();
    ++c.trials_by_strategy[via_arm ? r.metrics["strategy_used"].get<std::string>() : r.strategy];
    if (is_failure(r.outcome) && !is_free_running(r.strategy) &&
        (c.fewest_preemptions < 0 || r.preemptions < c.fewest_preemptions))
      c.fewest_preemptions = r.preemptions;
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
      c.metric_values.push_back(r.metrics[metric].get<double>());
    }
  }
  // A cell's "cell" line, or its parts' lines added up (sharded: every part
  // that has trials must be there, none interrupted, for the cell to count as done).
  std::map<CellKey, std::vector<const json*>> parts;
  for (const auto& cl : data.cells) {
    const CellKey key{cl.value("scenario", ""), cl.value("mitigation", ""), cl.value("threads", 0),
                      cl.value("strategy", ""), cl.value("seed", uint64_t{0})};
    if (cl.contains("part") && cl["part"].is_object())
      parts[key].push_back(&cl);
    else
      stats[key].summary = &cl;
  }
  for (const auto& [key, lines] : parts) {
    std::set<int64_t> seen;
    for (const json* l : lines) seen.insert((*l)["part"].value("index", int64_t{0}));
    const int64_t expected = (*lines.front())["part"].value("parts", int64_t{1});
    CellStats& st = stats[key];
    st.summary = nullptr;
    if (static_cast<int64_t>(seen.size()) < expected) continue;  // a shard is missing: not done
    auto whole = std::make_shared<json>(*lines.front());
    whole->erase("part");
    int64_t trials = 0, failures = 0;
    double wall = 0;
    bool interrupted = false, exhausted = true;
    json by_outcome = json::object();
    for (const json* l : lines) {
      trials += l->value("trials", int64_t{0});
      failures += l->value("failures", int64_t{0});
      wall += l->value("wall_s", 0.0);
      interrupted = interrupted || l->value("interrupted", false);
      exhausted = exhausted && l->value("exhausted", false);
      const json outcomes = l->value("by_outcome", json::object());
      for (const auto& [o, n] : outcomes.items()) by_outcome[o] = by_outcome.value(o, int64_t{0}) + n.get<int64_t>();
      if (l->contains("stopped")) (*whole)["stopped"] = (*l)["stopped"];
    }
    (*whole)["trials"] = trials;
    (*whole)["failures"] = failures;
    (*whole)["wall_s"] = wall;
    (*whole)["interrupted"] = interrupted;
    (*whole)["exhausted"] = exhausted;
    (*whole)["by_outcome"] = by_outcome;
    (*whole)["parts"] = static_cast<int64_t>(lines.size());
    std::vector<std::string> notes;
    for (const json* l : lines) notes.push_back(l->value("note", ""));
    if (const std::string note = add_up_portfolio_notes(notes); !note.empty()) (*whole)["note"] = note;
    st.whole = whole;
    st.summary = whole.get();
  }
  return stats;
}

// The "campaign" object: identity and totals.
json campaign_json(const ResultsData& data, const Campaign& c, const std::map<CellKey, CellStats>& stats) {
  bool interrupted = data.ends.size() < data.headers.size() || !data.unfinished.empty();
  double wall_s = 0;
  for (const auto& e : data.ends) {
    interrupted |= e.value("interrupted", false);
    wall_s = std::max(wall_s, e.value("wall_s", 0.0));
  }
  int64_t cells_done = 0;
  for (const auto& p : c.plan) {
    auto it = stats.find({p.spec.scenario, p.spec.mitigation, p.spec.threads, p.spec.strategy, p.spec.seed});
    if (it != stats.end() && it->second.summary && !it->second.summary->value("interrupted", false)) ++cells_done;
  }
  return {{"mode", c.mode},
          {"budget_scale", c.scale},
          {"shards", c.shards},
          {"interrupted", interrupted},
          {"cells_planned", c.plan.size()},
          {"cells_done", cells_done},
          {"complete", cells_done == static_cast<int64_t>(c.plan.size())},
          {"trials", data.trials.size()},
          {"wall_s", wall_s},
          {"warnings", data.warnings}};
}

// One object per planned cell of scenario `s`.
json cells_json(const Scenario& s, const Campaign& c, const std::map<CellKey, CellStats>& stats) {
  json cells = json::array();
  for (const auto& p : c.plan) {
    if (p.spec.scenario != s.name) continue;
    const CellKey k{s.name, p.spec.mitigation, p.spec.threads, p.spec.strategy, p.spec.seed};
    auto it = stats.find(k);
    const CellStats empty;
    const CellStats& st = it == stats.end() ? empty : it->second;
    json cj = {{"mitigation", p.spec.mitigation},
               {"threads", p.spec.threads},
               {"strategy", p.spec.strategy},
               {"seed", p.spec.seed},
               {"max_trials", p.spec.max_trials},
               {"trials", st.trials},
               {"failures", st.failures},
               {"rate", rate_of(st.failures, st.trials)},
               {"wilson", interval_json(st.failures, st.trials)},
               {"by_outcome", st.by_outcome},
               {"first_failure_trial", st.first_failure},
               {"first_failure_schedule", st.first_schedule},
               {"trial_ms", st.trials ? st.wall_ms / double(st.trials) : 0.0},
               {"metric", st.metric_n ? json(st.metric_sum / double(st.metric_n)) : json(nullptr)},
               {"metric_n", st.metric_n},
               {"metric_sd", sample_sd(st.metric_values)},
               {"status", st.summary ? (st.summary->value("interrupted", false) ? "interrupted" : "done")
                                     : (st.trials ? "partial" : "not run")}};
    if (st.cpu_n > 0) {
      json cpu = json::object();
      for (const auto& [phase, ms] : st.cpu_ms) cpu[phase] = ms / double(st.cpu_n);
      cj["cpu_ms"] = cpu;
    }
    if (st.body_n > 0) cj["body_ms"] = st.body_ms / double(st.body_n);
    cj["strategies_used"] = st.trials_by_strategy;
    cj["fewest_preemptions"] = st.fewest_preemptions;
    if (!st.first_schedule.empty()) {
      std::string why;
      const json min = load_schedule(minimized_schedule_path(st.first_schedule), &why);
      if (min.is_object() && min.contains("preemptions") && min["preemptions"].is_number_integer())
        cj["minimized_preemptions"] = min["preemptions"];
    }
    if (st.summary) {
      cj["exhausted"] = st.summary->value("exhausted", false);
      cj["pct_floor"] = st.summary->value("pct_floor", 0.0);
      cj["wall_s"] = st.summary->value("wall_s", 0.0);
      if (st.summary->contains("pct")) cj["pct"] = (*st.summary)["pct"];
      if (st.summary->contains("note")) cj["note"] = (*st.summary)["note"];
      if (st.summary->contains("classes")) cj["classes"] = (*st.summary)["classes"];
      if (st.summary->contains("stopped")) cj["stopped"] = (*st.summary)["stopped"];
    }
    cells.push_back(cj);
  }
  return cells;
}

// The cost metric per (mitigation, threads) in the cells of the scenario's
// cost strategy: every trial of every seed pooled (mean, sample sd, count).
std::map<std::pair<std::string, int>, Measure> metric_by_mitigation(const Scenario& s, const json& cells) {
  struct Pool {
    double n = 0, sum = 0, ss_within = 0;
    std::vector<std::pair<double, double>> parts;  // (n, mean) per cell
  };
  std::map<std::pair<std::string, int>, Pool> pools;
  for (const auto& cj : cells)
    if (cj["strategy"] == s.cost.strategy && !cj["metric"].is_null()) {
      Pool& p = pools[{cj["mitigation"].get<std::string>(), cj["threads"].get<int>()}];
      const double n = static_cast<double>(std::max<int64_t>(1, cj.value("metric_n", int64_t{1})));
      const double m = cj["metric"].get<double>();
      const json sd = cj.value("metric_sd", json());
      p.n += n;
      p.sum += n * m;
      if (sd.is_number()) p.ss_within += (n - 1) * sd.get<double>() * sd.get<double>();
      p.parts.emplace_back(n, m);
    }
  std::map<std::pair<std::string, int>, Measure> out;
  for (const auto& [k, p] : pools) {
    Measure m;
    m.n = static_cast<int64_t>(p.n);
    m.mean = p.sum / p.n;
    double ss = p.ss_within;
    for (const auto& [n, mean] : p.parts) ss += n * (mean - m.mean) * (mean - m.mean);
    m.sd = p.n >= 2 ? std::sqrt(ss / (p.n - 1)) : NAN;
    out[k] = m;
  }
  return out;
}

// The cost of `mitigation`: its metric relative to the ideal mitigation's at
// the same thread count, with its noise; null when no cell measured it.
//
// Noise: per thread count, twice the standard error of the ratio (about a
// 95% interval), from both means' standard errors sd/sqrt(n) (first-order
// propagation); over thread counts, that of the mean of the ratios. A ratio
// within its noise of 1 reads "same within noise": the measurement cannot
// tell the mitigation from the ideal. Fewer than two trials on either side:
// the noise is unknown, and the report says so rather than show a bare ratio.
json cost_json(const Scenario& s, const std::string& mitigation,
               const std::map<std::pair<std::string, int>, Measure>& metric_by) {
  std::vector<double> rel, noise;
  json per_threads = json::object(), noise_by_threads = json::object();
  double absolute = 0, abs_var = 0;
  int n_abs = 0;
  int64_t trials = 0;
  bool noise_known = true;
  for (int t : s.threads) {
    auto a = metric_by.find({mitigation, t});
    auto b = metric_by.find({s.cost.ideal, t});
    if (a == metric_by.end()) continue;
    absolute += a->second.mean;
    abs_var += std::isfinite(a->second.sd) ? a->second.sd * a->second.sd : 0;
    trials += a->second.n;
    ++n_abs;
    if (b != metric_by.end() && b->second.mean > 0) {
      const double r = a->second.mean / b->second.mean;
      rel.push_back(r);
      per_threads[std::to_string(t)] = r;
      if (std::isfinite(a->second.sd) && std::isfinite(b->second.sd) && a->second.mean > 0) {
        const double ea = a->second.sd / std::sqrt(double(a->second.n)) / a->second.mean;
        const double eb = b->second.sd / std::sqrt(double(b->second.n)) / b->second.mean;
        noise.push_back(2 * r * std::sqrt(ea * ea + eb * eb));
        noise_by_threads[std::to_string(t)] = noise.back();
      } else {
        noise_known = false;
      }
    }
  }
  if (!n_abs) return nullptr;
  double mean_rel = 0, sq = 0;
  for (double r : rel) mean_rel += r;
  if (!rel.empty()) mean_rel /= double(rel.size());
  for (double e : noise) sq += e * e;
  const bool have_noise = noise_known && !rel.empty() && noise.size() == rel.size();
  const double rel_noise = have_noise ? std::sqrt(sq) / double(noise.size()) : NAN;
  std::string comparison;
  if (rel.empty())
    comparison = "no ideal measured";
  else if (!have_noise)
    comparison = "noise unknown (fewer than 2 trials)";
  else if (std::fabs(mean_rel - 1) <= rel_noise)
    comparison = "same within noise";
  else
    comparison = mean_rel < 1 ? "lower than the ideal" : "higher than the ideal";
  return {{"metric", s.cost.metric},
          {"value", absolute / n_abs},
          {"value_sd", n_abs && abs_var > 0 ? json(std::sqrt(abs_var / n_abs)) : json(nullptr)},
          {"trials", trials},
          {"relative", rel.empty() ? json(nullptr) : json(mean_rel)},
          {"relative_noise", have_noise ? json(rel_noise) : json(nullptr)},
          {"relative_by_threads", per_threads},
          {"relative_noise_by_threads", noise_by_threads},
          {"comparison", comparison},
          {"ideal", s.cost.ideal}};
}

// Per mitigation: the verdict over all its cells, its expectation and its cost.
json mitigation_json(const Scenario& s, const Expectation& e, const json& cells, const Campaign& c,
                     const std::map<CellKey, CellStats>& stats,
                     const std::map<std::pair<std::string, int>, Measure>& metric_by) {
  int64_t trials = 0, failures = 0;
  std::map<std::string, int64_t> by_outcome;
  for (const auto& cj : cells) {
    if (cj["mitigation"] != e.mitigation) continue;
    trials += cj["trials"].get<int64_t>();
    failures += cj["failures"].get<int64_t>();
    for (auto it = cj["by_outcome"].begin(); it != cj["by_outcome"].end(); ++it)
      by_outcome[it.key()] += it.value().get<int64_t>();
  }
  std::vector<std::string> classes;
  for (const auto& [o, n] : by_outcome)
    if (is_failure(o)) classes.push_back(o);
  json mine = json::array();
  for (const auto& cj : cells)
    if (cj["mitigation"] == e.mitigation) mine.push_back(cj);
  const std::string verdict = trials == 0 ? "no data" : failures ? "fails" : "holds";
  return {{"name", e.mitigation},
          {"trials", trials},
          {"failures", failures},
          {"rate", rate_of(failures, trials)},
          {"wilson", interval_json(failures, trials)},
          {"by_outcome", by_outcome},
          {"verdict", verdict},
          {"grounds", verdict_grounds(verdict, mine)},
          {"failure_classes", classes},
          {"check", check_expectation(s, e, c.plan, stats, c.scale)},
          {"cost", cost_json(s, e.mitigation, metric_by)}};
}

// Trials to the first failure per strategy and thread count, in the baseline
// mitigation: how fast each strategy finds the race.
json first_failure_json(const Scenario& s, const json& cells, const std::string& baseline) {
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
  return ff;
}

// The timeline: the shortest failing schedule (fewest preemptions, then
// steps), preferring the baseline mitigation and controlled strategies; its
// minimised version when one was written. Null when no trial failed.
json timeline_json(const Scenario& s, const ResultsData& data, const std::string& baseline) {
  const TrialRecord* best = nullptr;
  auto rank = [&](const TrialRecord& r) {
    return std::make_tuple(r.mitigation != baseline, is_free_running(r.strategy), r.preemptions, r.steps);
  };
  for (const auto& r : data.trials)
    if (r.scenario == s.name && is_failure(r.outcome) && !r.schedule_file.empty() && (!best || rank(r) < rank(*best)))
      best = &r;
  if (!best) return nullptr;
  std::string why;
  const std::string min_path = minimized_schedule_path(best->schedule_file);
  const bool minimized = std::ifstream(min_path).good();
  json sched = load_schedule(minimized ? min_path : best->schedule_file, &why);
  json timeline = {{"schedule_file", minimized ? min_path : best->schedule_file},
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
  return timeline;
}

// The verdict table's rows: mitigations in the header's display order (the
// compile layer's one list), then any other in scenario order; and the group
// of each row that has one ("what people try first").
json verdict_table(const std::vector<Scenario>& scenarios, const json& catalogue) {
  auto swept = [&](const std::string& m) {
    for (const auto& s : scenarios)
      if (std::find(s.mitigations.begin(), s.mitigations.end(), m) != s.mitigations.end()) return true;
    return false;
  };
  std::vector<std::string> rows;
  json groups = json::object();
  for (const auto& m : catalogue) {
    const std::string name = m.value("name", "");
    if (name.empty() || !swept(name)) continue;
    rows.push_back(name);
    if (!m.value("group", "").empty()) groups[name] = m["group"];
  }
  for (const auto& s : scenarios)
    for (const auto& m : s.mitigations)
      if (std::find(rows.begin(), rows.end(), m) == rows.end()) rows.push_back(m);
  return {{"mitigations", rows}, {"groups", groups}};
}

}  // namespace

nlohmann::json interval_json(int64_t failures, int64_t trials) {
  const Interval w = wilson_interval(failures, trials);
  return nlohmann::json::array({w.low, w.high});
}

nlohmann::json build_report(const ResultsData& data) {
  const Campaign c = read_campaign(data);
  const auto stats = gather_cells(data, c.scenarios);
  json report = {{"format", kReportFormat},
                 {"version", kReportVersion},
                 {"racelab_version", RACELAB_VERSION},
                 {"libtorch", c.libtorch.empty() ? std::string("unknown") : c.libtorch},  // results older than the field
                 {"torch", c.torch},  // "" when the campaign ran against no Python torch
                 {"generated", now_utc()},
                 {"campaign", campaign_json(data, c, stats)}};

  int64_t total = 0, passed = 0, failed = 0, incomplete = 0;
  json sj = json::array();
  for (const auto& s : c.scenarios) {
    const json cells = cells_json(s, c, stats);
    const auto metric_by = metric_by_mitigation(s, cells);
    json mj = json::array();
    for (const auto& e : s.expectations) {
      mj.push_back(mitigation_json(s, e, cells, c, stats, metric_by));
      const std::string st = mj.back()["check"]["status"].get<std::string>();
      ++total;
      (st == "pass" ? passed : st == "fail" ? failed : incomplete)++;
    }
    // The most failure-prone mitigation: "none" when swept.
    const std::string baseline = std::find(s.mitigations.begin(), s.mitigations.end(), "none") != s.mitigations.end()
                                     ? "none"
                                     : s.mitigations.front();
    json strategies = json::array();
    for (const auto& b : s.strategies) strategies.push_back(b.strategy);
    sj.push_back({{"name", s.name},
                  {"race", s.race},
                  {"description", s.description},
                  {"file", s.file},
                  {"workload", s.workload},
                  {"knobs", s.knobs},
                  {"torch_entries", s.torch},  // "2.14": the knobs_by_torch / expectations_by_torch applied
                  {"threads", s.threads},
                  {"strategies", strategies},
                  {"cost_spec", {{"metric", s.cost.metric}, {"ideal", s.cost.ideal}, {"strategy", s.cost.strategy}}},
                  {"mitigations", mj},
                  {"first_failure", first_failure_json(s, cells, baseline)},
                  {"cells", cells},
                  {"timeline", timeline_json(s, data, baseline)}});
  }
  report["scenarios"] = sj;
  report["expectations"] = {{"total", total}, {"passed", passed}, {"failed", failed}, {"incomplete", incomplete}};
  report["verdict_table"] = verdict_table(c.scenarios, c.mitigations);
  // Real-torch scenarios beside their model twins, where both ran.
  json documents = json::object(), torch_by = json::object();
  for (const auto& s : c.scenarios) documents[s.name] = s.source;
  for (const auto& r : data.trials)
    if (r.metrics.is_object() && r.metrics.contains("torch") && r.metrics["torch"].is_string())
      torch_by[r.scenario] = r.metrics["torch"];
  json beside = beside_model_json(sj, documents, torch_by);
  if (!beside["pairs"].empty()) report["beside_model"] = beside;
  return report;
}

bool all_expectations_pass(const nlohmann::json& report) {
  const auto& e = report.at("expectations");
  return e.value("failed", 1) == 0 && e.value("incomplete", 1) == 0 && e.value("total", 0) > 0;
}

}  // namespace racelab::reports
