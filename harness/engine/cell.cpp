#include "engine/cell.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "engine/driver.h"
#include "engine/trial_plan.h"
#include "engine/python_host.h"
#include "engine/exec_host.h"
#include "engine/run_trial.h"
#include "engine/schedule.h"
#include "engine/schedule_fit.h"
#include "engine/strategy.h"
#include "engine/supervisor.h"
#include "racelab/file_error.h"

namespace racelab {

using nlohmann::json;

json TrialRecord::to_json() const {
  json j = {{"scenario", scenario}, {"workload", workload}, {"mitigation", mitigation}, {"strategy", strategy},
            {"outcome", outcome},   {"detail", detail},     {"knobs", knobs},           {"threads", threads},
            {"seed", seed},         {"trial", trial},       {"steps", steps},           {"preemptions", preemptions},
            {"wall_ms", wall_ms},   {"metrics", metrics}};
  if (!compact.empty()) j["compact"] = compact;
  if (!schedule_file.empty()) j["schedule_file"] = schedule_file;
  return j;
}

TrialRecord TrialRecord::from_json(const json& j) {
  TrialRecord r;
  r.scenario = j.value("scenario", "");
  r.workload = j.at("workload").get<std::string>();
  r.mitigation = j.value("mitigation", "");
  r.strategy = j.value("strategy", "");
  r.outcome = j.at("outcome").get<std::string>();
  r.detail = j.value("detail", "");
  r.knobs = j.value("knobs", json::object());
  r.threads = j.value("threads", 0);
  r.seed = j.value("seed", uint64_t{0});
  r.trial = j.value("trial", int64_t{0});
  r.steps = j.value("steps", int64_t{0});
  r.preemptions = j.value("preemptions", int64_t{0});
  r.wall_ms = j.value("wall_ms", 0.0);
  r.compact = j.value("compact", "");
  r.schedule_file = j.value("schedule_file", "");
  r.metrics = j.value("metrics", json::object());
  return r;
}

namespace {

std::string safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

}  // namespace

CellSummary run_cell(const CellSpec& spec, const std::function<void(const TrialRecord&)>& sink) {
  using Clock = std::chrono::steady_clock;
  const Workload& w = require_workload(spec.workload);
  const json merged = merge_knobs(w, spec.knobs);  // validates
  json knobs = spec.knobs.is_object() ? spec.knobs : json::object();
  // Every exec trial records the program it ran: its absolute path and
  // program_id, so its schedules replay only against that build.
  if (spec.workload == kExecWorkload) knobs = complete_exec_knobs(merged);
  std::string mitigation = resolve_mitigation(w, spec.mitigation);
  if (spec.threads < 1) throw std::invalid_argument("threads: expected an integer >= 1");
  std::string strategy = spec.strategy.empty() ? "auto" : spec.strategy;
  // The portfolio's arms are all controlled; a race that exists only free
  // running gets the free-running strategy instead, and the records say so.
  if (strategy == "auto" && w.needs_free_running) strategy = "os";
  // A replayed schedule must be one of this program's (engine/schedule_fit.h).
  if (const StrategyName sn = parse_strategy(strategy); sn.kind == StrategyName::Kind::kReplay) {
    const std::string source = sn.replay.rfind(kCompactPrefix, 0) == 0 ? "compact form" : sn.replay;
    const std::string warning =
        check_schedule_fits(load_schedule_arg(sn.replay), source, spec.workload, knobs, spec.any_program);
    if (!warning.empty() && spec.warn) spec.warn(warning);
  }
  std::unique_ptr<StrategyDriver> driver = make_driver(strategy, spec.threads, spec.seed);
  // A trial depends on its index alone (engine/trial_plan.h): a learning
  // driver starts afresh at each block, and a part runs its blocks only.
  const int64_t block_length = trial_block(strategy);
  int64_t driver_block = 0;
  if (w.needs_free_running && driver->controlled())
    throw std::invalid_argument(fmt::format(
        "workload '{}' races only under real concurrency (its threads are not racelab::Threads): use strategy os "
        "or os+jitter, not '{}'",
        w.name, spec.strategy));
  if (!w.host.empty() && !spec.supervised)
    throw std::invalid_argument(fmt::format("workload '{}' runs in a {} worker, never in-process", w.name, w.host));
  // A Python workload without --python is a configuration error before any trial.
  if (spec.supervised && spec.workload != kExecWorkload) (void)supervisor_for(w);
  if (!spec.schedule_dir.empty()) {
    // Made now, parents too; a folder that cannot be made fails here, before any trial.
    std::error_code ec;
    std::filesystem::create_directories(spec.schedule_dir, ec);
    if (ec) throw FileError(fmt::format("cannot make the schedule folder {}: {}", spec.schedule_dir, ec.message()));
  }

  CellSummary sum;
  std::set<std::string> saved_classes;
  // Synchronisation racelab did not see (harness/preload/unseen.h), over all trials.
  std::map<std::string, int64_t> unseen;
  // auto's arms: failures and trials of each, over every block.
  std::map<std::string, std::pair<int64_t, int64_t>> arm_counts;
  auto t0 = Clock::now();
  for (int64_t trial = 0; trial < spec.max_trials; ++trial) {
    if (!part_runs(spec.part, trial, block_length)) continue;
    if (spec.max_seconds > 0 && trial >= spec.min_trials &&
        std::chrono::duration<double>(Clock::now() - t0).count() >= spec.max_seconds)
      break;
    // A learning driver starts afresh at each block; the others learn nothing to forget.
    if (const int64_t block = block_of(trial, block_length); block_length > 1 && block != driver_block) {
      driver = make_driver(strategy, spec.threads, spec.seed);
      driver_block = block;
    }
    TrialSpec ts;
    ts.scenario = spec.scenario;
    ts.workload = spec.workload;
    ts.mitigation = mitigation;
    ts.knobs = knobs;
    ts.threads = spec.threads;
    ts.trial = trial;
    ts.seed = driver->fixed_seed().value_or(mix_seed(spec.seed, static_cast<uint64_t>(trial)));
    ts.strategy_name = strategy;
    // The in-worker watchdog (no progress for half the timeout; for plain `os`,
    // which has no progress signal, the whole trial) fires first; the
    // supervisor's kill at the full timeout is the backstop.
    ts.watchdog_s = std::max(0.2, spec.trial_timeout_s / 2);
    if (!driver->next(trial, &ts.strategy)) break;

    // An exec trial's watchdog judges by CPU time, not the wall clock: its
    // supervisor waits out the exec worker's own backstop.
    const double kill_after_s =
        ts.workload == kExecWorkload ? exec_backstop_s(ts.watchdog_s) + 5 : spec.trial_timeout_s;
    TrialResult r = spec.supervised ? supervisor_for(ts).run(ts, kill_after_s) : run_trial(ts);
    // A trial that cannot run here -- an exec program that never reached main
    // (engine/exec_host.h), a real CUDA workload on a machine with no device
    // (cuda/graph_capture.h) -- is bad input or environment, before anything is written.
    if (r.metrics.is_object() && r.metrics.value("bad_input", false)) throw ExecError(r.detail);
    auto note_unseen = [&](const std::string& call, int64_t n) {
      if (unseen.count(call) == 0 && spec.warn)
        spec.warn(fmt::format("the program synchronised outside racelab's control ({}, trial {}): the orders it "
                              "makes are not explored, and no search over it is complete",
                              call, trial));
      unseen[call] += n;
    };
    if (r.metrics.is_object() && r.metrics.contains("unseen_sync") && r.metrics["unseen_sync"].is_object())
      for (const auto& [call, n] : r.metrics["unseen_sync"].items())
        note_unseen(call, n.is_number_integer() ? n.get<int64_t>() : 1);
    // A thread let go after a wait racelab could not see (a spin on an atomic, a futex of a pool's own):
    // the order it came back in was the machine's, not the search's.
    if (std::any_of(r.decisions.begin(), r.decisions.end(), [](const Decision& d) { return d.let_go; }))
      note_unseen("a wait with no scheduling point: a thread was let go", 1);
    driver->observe(r);
    if (ts.strategy.contains("via")) {
      auto& [arm_failures, arm_trials] = arm_counts[ts.strategy["via"].get<std::string>()];
      arm_failures += is_failure(r.outcome) ? 1 : 0;
      ++arm_trials;
    }

    TrialRecord rec;
    rec.scenario = spec.scenario;
    rec.workload = spec.workload;
    rec.mitigation = mitigation;
    rec.strategy = ts.strategy_name;
    rec.outcome = outcome_name(r.outcome);
    rec.detail = r.detail;
    rec.knobs = ts.knobs;
    rec.threads = spec.threads;
    rec.seed = ts.seed;
    rec.trial = trial;
    rec.steps = r.steps;
    rec.preemptions = r.preemptions;
    rec.wall_ms = r.wall_ms;
    rec.metrics = r.metrics.is_object() ? r.metrics : json::object();
    rec.metrics["managed_threads"] = r.managed_threads;
    // Which strategy ran this trial (auto's arm) and what it rested on (surw's estimates).
    if (ts.strategy.contains("via")) rec.metrics["strategy_used"] = ts.strategy["via"];
    if (ts.strategy.contains("label")) rec.metrics["search"] = ts.strategy["label"];
    if (is_failure(r.outcome)) {
      Schedule sched = Schedule::from_trial(ts, r);
      if (driver->controlled() && ts.strategy.value("kind", "") != "free") rec.compact = to_compact(sched);
      if (!spec.schedule_dir.empty() && saved_classes.insert(rec.outcome).second) {
        // Threads and cell seed in the name: cells of one campaign share a folder.
        rec.schedule_file = fmt::format("{}/{}-{}-{}-{}t-s{}-trial{}-{}.json", spec.schedule_dir,
                                        safe(spec.scenario.empty() ? spec.workload : spec.scenario), safe(mitigation),
                                        safe(ts.strategy_name), spec.threads, spec.seed, trial, rec.outcome);
        save_schedule(sched, rec.schedule_file);
      }
      ++sum.failures;
      if (sum.first_failure_trial < 0) {
        sum.first_failure_trial = trial;
        sum.first_failure_schedule = rec.schedule_file;
      }
    }
    ++sum.trials;
    ++sum.by_outcome[rec.outcome];
    sink(rec);
    if (r.process_tainted && !spec.supervised) break;  // in-process: a thread is lost for good
    if (spec.stop_at_first_failure && sum.failures > 0 && sum.trials >= spec.rate_trials) break;
  }
  sum.exhausted = driver->exhausted();
  sum.classes = driver->classes();
  sum.pct_floor = driver->pct_floor();
  const StrategyDriver::PctParams pct = driver->pct_params();
  sum.pct_depth = pct.d;
  sum.pct_k = pct.k;
  sum.pct_n = pct.n;
  sum.note = driver->note();
  if (!arm_counts.empty()) {
    // A portfolio's arms over the whole cell, not only over the last block's driver.
    std::string note = "auto:";
    std::vector<std::string> arms(std::begin(kAutoArms), std::end(kAutoArms));
    arms.push_back("os");
    for (const std::string& arm : arms)
      if (auto it = arm_counts.find(arm); it != arm_counts.end() || arm != "os")
        note += fmt::format(" {} {}/{}", arm, it == arm_counts.end() ? 0 : it->second.first,
                            it == arm_counts.end() ? 0 : it->second.second);
    sum.note = note + " (failures/trials per strategy)";
  }
  if (!unseen.empty()) {
    // A search over the steps racelab saw is no proof when the program also
    // waited or woke where it did not see: never "complete" then.
    std::string calls;
    for (const auto& [call, n] : unseen) calls += fmt::format("{}{} x{}", calls.empty() ? "" : ", ", call, n);
    sum.exhausted = false;
    // The driver's own verdict ("dpor complete: N classes ...") covers only the steps racelab saw.
    std::string searched = sum.note;
    if (const size_t at = searched.find(" complete"); at != std::string::npos) searched.erase(at, 9);
    sum.note = fmt::format("incomplete: the program synchronised outside racelab's control ({}){}", calls,
                           searched.empty() ? "" : "; over the steps racelab saw, " + searched);
  }
  sum.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return sum;
}

}  // namespace racelab
