// `racelab bench`: whole-system benchmarks as ratios within one run. This
// file reads the flags, runs the chosen sections (cli/bench/) and writes
// BENCH.json and BENCH.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench/bench.h"
#include "cli/cell_flags.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "racelab/atomic_file.h"
#include "racelab/exit_code.h"
#include "trainer/util/threads.h"

namespace racelab::cli {

using nlohmann::json;

int bench_command(int argc, char** argv) {
  bench::Options o;
  CLI::App app{"Whole-system benchmarks as ratios within one run: scheduling cost, time to reproduce, "
               "mitigation cost on the real trainer, worker scaling, search strength on the hard-bug catalogue",
               argv[0]};
  app.add_flag("--quick", o.quick, "Minimal iterations (the CI smoke pass); figures are not meaningful");
  app.add_option("--out", o.out_dir, "Directory for BENCH.json and BENCH.md");
  app.add_option("--sections", o.sections,
                 "Subset of: scheduling reproduce fallback mitigations scaling search exec memory pytorch compare "
                 "(compare, racelab compare on the catalogue, only when named)")
      ->check(CLI::IsMember({"scheduling", "reproduce", "fallback", "mitigations", "scaling", "search", "exec", "memory", "pytorch", "compare"}));
  add_python_option(app);
  app.add_option("--repeats", o.repeats, "Repeats per trainer cell (noise estimate)")->check(CLI::Range(1, 20));
  app.add_option("--trials", o.reproduce_trials, "Trial budget per (race, strategy) cell")->check(CLI::Range(1, 100000));
  app.add_option("--trainer-steps", o.trainer_steps, "Steps per worker in each trainer cell")->check(CLI::Range(1, 10000));
  app.add_option("--search-budget", o.search_budget,
                 "search: trials per (workload, strategy, seed) before a seed counts as a miss (the published "
                 "protocol: 10000)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--search-seeds", o.search_seeds, "search: seeds per (workload, strategy)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--search-strategies", o.search_only_strategies, "search: only these strategies (default: all)")
      ->check(CLI::IsMember(bench::search_strategies()));
  app.add_option("--search-workloads", o.search_only_workloads, "search: only these hard-bug workloads (default: all)")
      ->check(CLI::IsMember(bench::search_workloads()));
  app.add_option("--compare", o.compare, "An earlier BENCH.json: flag regressions beyond the measured noise");
  if (int rc = parse_flags(app, argc, argv); rc != kGoOn) return rc;
  if (!o.compare.empty())
    if (int rc = require_input_file(app, o.compare); rc != kGoOn) return rc;
  json old_run;
  if (!o.compare.empty()) {
    std::ifstream f(o.compare);
    old_run = json::parse(f, nullptr, false);
    if (old_run.is_discarded() || old_run.value("schema", "") != "racelab-bench/1") {
      std::fprintf(stderr, "racelab bench: %s: field 'schema': expected \"racelab-bench/1\" (a BENCH.json)\n",
                   o.compare.c_str());
      return kExitBadInput;
    }
  }
  racelab::trainer::use_single_intra_op_thread();  // as the workloads do: one intra-op thread, OpenBLAS too
  if (!o.compare.empty() && old_run.value("quick", false) != o.quick) {
    std::fprintf(stderr, "racelab bench: %s: field 'quick': the old run %s --quick, this one %s: compare like with like\n",
                 o.compare.c_str(), old_run.value("quick", false) ? "used" : "did not use", o.quick ? "does" : "does not");
    return kExitUsage;
  }
  json b = {{"schema", "racelab-bench/1"}, {"machine", bench::machine()}, {"quick", o.quick}};
  auto t0 = std::chrono::steady_clock::now();
  auto want = [&](const char* s) { return std::find(o.sections.begin(), o.sections.end(), s) != o.sections.end(); };
  if (want("scheduling")) std::fprintf(stderr, "bench: scheduling\n"), b["scheduling"] = bench::bench_scheduling(o);
  if (want("reproduce")) std::fprintf(stderr, "bench: reproduce\n"), b["reproduce"] = bench::bench_reproduce(o);
  if (want("fallback")) std::fprintf(stderr, "bench: fallback\n"), b["fallback"] = bench::bench_fallback(o);
  if (want("mitigations")) std::fprintf(stderr, "bench: mitigations\n"), b["mitigations"] = bench::bench_mitigations(o);
  if (want("scaling")) std::fprintf(stderr, "bench: scaling\n"), b["scaling"] = bench::bench_scaling(o);
  if (want("search")) std::fprintf(stderr, "bench: search\n"), b["search"] = bench::bench_search(o);
  if (want("exec")) std::fprintf(stderr, "bench: exec\n"), b["exec"] = bench::bench_exec(o);
  if (want("memory")) std::fprintf(stderr, "bench: memory\n"), b["memory"] = bench::bench_memory(o);
  if (want("pytorch")) std::fprintf(stderr, "bench: pytorch\n"), b["pytorch"] = bench::bench_pytorch(o);
  if (want("compare")) std::fprintf(stderr, "bench: compare\n"), b["compare"] = bench::bench_compare(o);
  b["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!o.compare.empty()) b["comparison"] = bench::compare_runs(old_run, b, o.compare);

  std::string md = bench::markdown(b);
  std::filesystem::create_directories(o.out_dir);
  write_file_atomically(o.out_dir + "/BENCH.json", b.dump(2) + "\n");
  write_file_atomically(o.out_dir + "/BENCH.md", md);
  std::fputs(md.c_str(), stdout);
  std::fprintf(stderr, "bench: wrote %s/BENCH.json and BENCH.md (%.0f s)\n", o.out_dir.c_str(), b["wall_s"].get<double>());
  // The compare section runs the catalogue: a failed expectation there, or a
  // campaign that left no report, fails the bench as it fails `racelab compare`.
  if (b.contains("compare") && (b["compare"].contains("error") || b["compare"].value("exit_code", 0) != 0))
    return b["compare"].contains("error") ? kExitInternal : kExitExpectationFailed;
  if (b.contains("comparison"))
    for (auto& r : b["comparison"]["rows"])
      if (r["verdict"] == "REGRESSION") return kExitExpectationFailed;
  return kExitOk;
}

}  // namespace racelab::cli
