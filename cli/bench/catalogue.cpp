// cli/bench/catalogue.cpp -- section `compare`: `racelab compare` on the
// default catalogue, as a user runs it (one shard per core), and where its
// time went (reports/time_split.h): trials, trial time and time per trial by
// scenario, the share of the cores' time left idle, isolate_process's time
// per trainer trial over isolate_thread's in the same run, and, for the
// compile layer's scenarios, a trial's CPU time by phase and the harness's
// share of the trial time.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/bench/bench.h"
#include "campaign/catalogue.h"
#include "engine/child_process.h"
#include "reports/time_split.h"

namespace racelab::cli::bench {

json bench_compare(const Options& o) {
  namespace fs = std::filesystem;
  const std::string out = (fs::path(o.out_dir) / "compare").string();
  // --quick: a tenth of every budget (the CI smoke pass); the figures then
  // describe that smaller campaign, not the user's.
  const std::string scale = o.quick ? "0.1" : "1";
  ChildSpec spec;
  spec.argv = {"/proc/self/exe", "compare", campaign::default_catalogue(), "--out", out,
               "--budget-scale", scale, "--no-progress", "--no-minimize"};
  fs::create_directories(out);
  const std::string log = (fs::path(out) / "compare-log.txt").string();
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd >= 0) spec.dup2 = {{log_fd, 1}, {log_fd, 2}};
  std::string error;
  const pid_t pid = spawn_child(spec, &error);
  close_fd(&log_fd);
  if (pid < 0) std::fprintf(stderr, "racelab bench: %s\n", error.c_str());
  const int status = pid > 0 ? wait_child(pid) : -1;
  const int rc = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(fs::path(out) / "report.json");
  json report = json::parse(in, nullptr, false);
  if (report.is_discarded() || !report.is_object())
    return {{"error", fmt::format("racelab compare left no report (exit {}; log: {})", rc, log)}};
  json split = reports::time_split(report);
  split["exit_code"] = rc;
  split["budget_scale"] = o.quick ? 0.1 : 1.0;
  split["expectations"] = report["expectations"];
  return split;
}

}  // namespace racelab::cli::bench
