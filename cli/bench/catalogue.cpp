// cli/bench/catalogue.cpp -- section `compare`: `racelab compare` on the
// default catalogue, as a user runs it (one shard per core), and where its
// time went (reports/time_split.h): trials, trial time and time per trial by
// scenario, the share of the cores' time left idle, isolate_process's time
// per trainer trial over isolate_thread's in the same run, and, for the
// compile layer's scenarios, a trial's CPU time by phase and the harness's
// share of the trial time.
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
#include "reports/time_split.h"

namespace racelab::cli::bench {

json bench_compare(const Options& o) {
  namespace fs = std::filesystem;
  const std::string out = (fs::path(o.out_dir) / "compare").string();
  // --quick: a tenth of every budget (the CI smoke pass); the figures then
  // describe that smaller campaign, not the user's.
  const std::string scale = o.quick ? "0.1" : "1";
  std::vector<std::string> args = {"/proc/self/exe", "compare", campaign::default_catalogue(), "--out", out,
                                   "--budget-scale", scale, "--no-progress", "--no-minimize"};
  fs::create_directories(out);
  const std::string log = (fs::path(out) / "compare-log.txt").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (std::FILE* lf = std::fopen(log.c_str(), "w")) {
      ::dup2(fileno(lf), 1);
      ::dup2(fileno(lf), 2);
    }
    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    ::execv(av[0], av.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid > 0) ::waitpid(pid, &status, 0);
  const int rc = pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
