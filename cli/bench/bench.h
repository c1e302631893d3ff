// cli/bench/bench.h -- the sections of `racelab bench`: whole-system
// benchmarks reported as ratios measured within one run, because the machines
// it runs on are shared and noisy (speed is never asserted in tests).
//
//   scheduling   cost of control: the cost of a step at which the strategy
//                keeps the running thread and of one that switches threads
//                (in-process trials of n and 2n steps, decisions mirrored as
//                a worker mirrors them: the difference over the extra steps),
//                time per step of a
//                random ping-pong, and controlled vs free-running trial time
//                on the direct-leak and stuck-true races (scheduling.cpp);
//   reproduce    per race and strategy: failure probability per trial (95%
//                Wilson interval), median trials and wall time to a failure
//                (reproduce.cpp);
//   fallback     what a silent eager fallback costs per attention call
//                (fallback.cpp);
//   mitigations  the real trainer: steps/s for N workers under each mitigation
//                relative to the race-free ideal (isolate_thread), compile time,
//                peak RSS (trainer_cost.cpp);
//   scaling      steps/s against N up to the number of cores, as a ratio to
//                linear (trainer_cost.cpp);
//   search       every strategy on every hard-bug workload, N seeds each:
//                bugs found, median and 90th-percentile trials to the first
//                failure, schedules/s (search.cpp);
//   exec         the exec host on a two-thread C program: trials/s with the
//                fork server / with an exec per trial, a controlled lock/unlock
//                / native, free running with the preload library / native (exec.cpp);
//   memory       memory-access points: a program built with them against its
//                plain build, run natively, with the preload library loaded
//                but not scheduling, and controlled (memory.cpp);
//   compare      `racelab compare` on the default catalogue: trials, trial
//                time and time per trial by scenario, the idle share of the
//                cores, isolate_process / isolate_thread per trainer trial
//                (catalogue.cpp; not in the default list: it runs minutes);
//   pytorch      the direct leak on the model and on real torch (a Python
//                worker): trials/s of a holding cell and their ratio, trials to
//                the first failure under os, random and pct:3; skipped without
//                a Python with torch (pytorch.cpp).
//
// Output: BENCH.json (schema racelab-bench/1) and BENCH.md (report.cpp). With
// --compare OLD.json every ratio is compared with the old run and flagged as a
// regression only when it moved by more than the noise measured across
// repeats (compare.cpp).
#ifndef RACELAB_CLI_BENCH_BENCH_H_
#define RACELAB_CLI_BENCH_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/cell.h"

namespace racelab::cli::bench {

using nlohmann::json;

struct Options {
  bool quick = false;
  std::string out_dir = "bench-out";
  std::string compare;
  std::vector<std::string> sections{"scheduling", "reproduce", "fallback", "mitigations", "scaling", "search", "exec",
                                    "memory", "pytorch"};
  int repeats = 3;
  int64_t reproduce_trials = 60;
  int trainer_steps = 150;
  // search: trials per (workload, strategy, seed) cell and seeds per pair. The
  // default keeps the section to a few minutes; the published protocol is
  // --search-budget 10000.
  int64_t search_budget = 200;
  int search_seeds = 20;
  // search: only these strategies / workloads (empty: all), to rerun part of
  // the table (a long budget takes an hour or more on two cores).
  std::vector<std::string> search_only_strategies;
  std::vector<std::string> search_only_workloads;
};

// ---- Measurement helpers (measure.cpp) -----------------------------------------

struct CellRun {
  CellSummary summary;
  std::vector<TrialRecord> records;
};
// One cell of trials under the scenario name "bench", every record kept.
CellRun run(CellSpec spec);
double median(std::vector<double> v);
// Peak RSS of this process since the last reset. Writing "5" to clear_refs
// resets the kernel's high-water mark, so each cell gets its own peak.
void reset_peak_rss();
double peak_rss_mb();
std::string fmt_num(double v, int digits = 2);

// ---- Sections -----------------------------------------------------------------

json bench_scheduling(const Options& o);
json bench_reproduce(const Options& o);
json bench_fallback(const Options& o);
json bench_mitigations(const Options& o);
json bench_scaling(const Options& o);
json bench_pytorch(const Options& o);
json bench_compare(const Options& o);
json bench_search(const Options& o);
// The strategies the search section compares, in table order.
const std::vector<std::string>& search_strategies();
// The hard-bug workloads it runs them on, in table order.
const std::vector<std::string>& search_workloads();
json bench_exec(const Options& o);
json bench_memory(const Options& o);
// Shared by exec and memory (exec.cpp): a program built with racelab, next to
// this binary; the nanoseconds a bench program wrote to `path`; one cell of
// `racelab exec` trials of argv, after a first trial that warms the worker.
std::string bench_program(const std::string& name);
// The same cell at -j 1 and -j `jobs` (cli/cell_parts.h), run by the lean
// racelab in turn, `runs` times each (a change in load touches both): the
// median wall time of each and -j N's speed-up. `cmd` is the command and its
// flags before `-j` ("exec -n 100 -q --no-progress -- PROGRAM").
json jobs_speed_up(const std::vector<std::string>& cmd, int jobs, int runs);
double read_ns(const std::string& path);
CellRun exec_cell(const std::vector<std::string>& argv, bool fork_server, const std::string& strategy, int64_t n);

// ---- Output -------------------------------------------------------------------

json machine();                      // CPU, cores, kernel, racelab version, points on/off
std::string markdown(const json& b); // BENCH.md
// The rows of --compare: every comparable ratio, its change and its verdict.
json compare_runs(const json& old_run, const json& new_run, const std::string& old_path);

}  // namespace racelab::cli::bench

#endif  // RACELAB_CLI_BENCH_BENCH_H_
