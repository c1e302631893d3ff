#include "campaign/local_shards.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "campaign/campaign.h"
#include "engine/child_process.h"

namespace racelab::campaign {

namespace fs = std::filesystem;

namespace {

// Starts one shard: this binary run with `args` (the command and its flags)
// as a child named "racelab: shard" in `ps`, whose output goes to `log` (the
// shard's own summary goes to its folder; the parent prints the merged one).
//  - It starts with SIGINT and SIGTERM blocked, and install_interrupt_handlers()
//    unblocks them once its handlers are set: an interrupt that arrives while
//    it is still starting up waits for them instead of killing it, so every
//    shard leaves a valid (perhaps empty) results file.
//  - It calls stop_with_parent() (below) first thing.
pid_t start_shard(const std::vector<std::string>& args, const std::string& log) {
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error(fmt::format("cannot start a shard: {}: {}", log, std::strerror(errno)));
  ChildSpec spec;
  spec.argv = {"/proc/self/exe"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.shown_name = "racelab: shard";
  spec.parent_pid_env = kShardParentPidEnv;
  spec.dup2 = {{log_fd, 1}, {log_fd, 2}};
  sigset_t stop_signals, old;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, &old);  // the child inherits the mask, exec keeps it
  std::string error;
  const pid_t pid = spawn_child(spec, &error);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);  // an interrupt meanwhile is delivered here, now
  int fd = log_fd;
  close_fd(&fd);
  if (pid < 0) throw std::runtime_error("cannot start a shard: " + error);
  return pid;
}

}  // namespace

std::vector<std::string> run_local_shards(const LocalShards& f, std::vector<int>* exit_codes) {
  const std::string& cmd = f.command;
  const int n = f.count;
  std::vector<pid_t> kids;
  std::vector<std::string> results;
  // The shards share one list of cells, costliest first (cell_claims.h): a
  // fresh counter per campaign.
  const std::string claims = (fs::path(f.out) / "shards" / "claims").string();
  fs::create_directories(fs::path(claims).parent_path());
  fs::remove(claims);
  for (int k = 1; k <= n; ++k) {
    const std::string dir = (fs::path(f.out) / "shards" / std::to_string(k)).string();
    std::vector<std::string> args = {cmd};
    args.insert(args.end(), f.paths.begin(), f.paths.end());
    for (const std::string& a : {std::string("--out"), dir, std::string("--budget-scale"),
                                 fmt::format("{}", f.budget_scale), std::string("--shard"),
                                 fmt::format("{}/{}", k, n), std::string("--jobs"), std::string("1"),
                                 std::string("--no-progress"), std::string("--no-minimize"),
                                 std::string("--claim-from"), claims})
      args.push_back(a);
    if (!f.torch.empty()) args.insert(args.end(), {"--torch", f.torch});
    results.push_back((fs::path(dir) / results_file_name({k - 1, n})).string());
    fs::create_directories(dir);  // here, so a path that cannot be made is the parent's exit 3
    const pid_t pid = start_shard(args, (fs::path(dir) / "log.txt").string());
    kids.push_back(pid);
  }
  std::fprintf(stderr, "racelab %s: running %d shards in parallel (results in %s/shards/)\n", cmd.c_str(), n,
               f.out.c_str());
  // Live progress from the shards' results files: count finished cells and
  // trials in the lines appended since the last look.
  const bool tty = f.progress;
  std::vector<std::streamoff> offsets(results.size(), 0);
  int64_t cells = 0, trials = 0, failing = 0;
  const auto t0 = std::chrono::steady_clock::now();
  size_t running = kids.size();
  if (exit_codes != nullptr) exit_codes->assign(kids.size(), 0);
  bool forwarded = false;
  while (running > 0) {
    // A Ctrl-C on a terminal reaches the whole process group; a `kill -INT`
    // of this process alone is passed on, so every shard stops and reports.
    // It is passed on as SIGTERM: a shard that already had the terminal's
    // SIGINT takes a second SIGINT as "stop now, without a report" (a user's
    // second Ctrl-C), and would die half-way through writing its report.
    if (interrupt_requested() && !forwarded) {
      for (pid_t pid : kids)
        if (pid > 0) ::kill(pid, SIGTERM);
      forwarded = true;
    }
    for (size_t k = 0; k < kids.size(); ++k) {
      pid_t& pid = kids[k];
      if (pid <= 0) continue;
      int status = 0;
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid && exit_codes != nullptr)
        (*exit_codes)[k] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      if (r == pid || (r < 0 && errno != EINTR)) pid = 0, --running;
    }
    if (tty) {
      for (size_t i = 0; i < results.size(); ++i) {
        std::ifstream in(results[i]);
        if (!in) continue;
        in.seekg(offsets[i]);
        std::string line;
        while (std::getline(in, line) && !in.eof()) {
          offsets[i] = in.tellg();
          // Keys are written sorted: a trial line starts {"cell_seed":..,"trial":..}.
          if (line.rfind("{\"cell_seed\"", 0) == 0) {
            ++trials;
            failing += line.find("\"outcome\":\"holds\"") == std::string::npos;
          } else if (line.rfind("{\"cell\":", 0) == 0) {
            ++cells;
          }
        }
      }
      std::fprintf(stderr, "\r\33[K[%lld/%zu cells] %lld trials, %lld failing | %.0f s", static_cast<long long>(cells),
                   f.total_cells, static_cast<long long>(trials), static_cast<long long>(failing),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      std::fflush(stderr);
    }
    if (running > 0) ::usleep(200000);
  }
  if (tty) std::fprintf(stderr, "\r\33[K");
  return results;
}

bool stop_with_parent() { return die_with_parent(kShardParentPidEnv, SIGTERM); }

}  // namespace racelab::campaign
