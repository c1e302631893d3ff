// cli/bench/exec.cpp -- the exec host's costs (see bench.h), on a two-thread
// C program built with racelab (racelab_exec_target, next to the binary):
//  - trials per second with the fork server, and with an exec per trial;
//  - the cost of a lock/unlock pair under control, against the same program's
//    own lock/unlock run natively (no preload library);
//  - the program's free-running slowdown with the preload library loaded but
//    not scheduling (strategy os), against native.
//  - start-up: `racelab exec -n 1 -- /bin/true` (the lean racelab beside this
//    binary: start, its worker and fork server, one trial, exit) and
//    `racelab version`, each beside the launch of /bin/true itself.
// The lock figures are measured by the program itself around its threads'
// loops, so start-up and the supervisor are not in them.
#include "cli/bench/bench.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>
#include <string>

#include <fmt/format.h>

#include "engine/child_process.h"
#include "engine/exec_host.h"

namespace racelab::cli::bench {

std::string bench_program(const std::string& name) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string dir = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("./racelab");
  return dir.substr(0, dir.find_last_of('/')) + "/" + name;
}

double read_ns(const std::string& path) {
  std::ifstream in(path);
  double v = -1;
  in >> v;
  return v;
}

// Milliseconds from spawning argv to its exit (output to /dev/null); -1 if it
// could not start or did not exit 0.
double launch_ms(const std::vector<std::string>& argv) {
  int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_out < 0) return -1;
  ChildSpec child;
  child.argv = argv;
  child.dup2 = {{null_out, 1}, {null_out, 2}};
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = spawn_child(child, &error);
  close_fd(&null_out);
  if (pid < 0) return -1;
  const int status = wait_child(pid);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ms : -1;
}

// Start-up of the lean racelab beside /bin/true's own launch: the three are
// run in turn, `runs` times, so a change in the machine's load touches all
// three; medians, and their ratios.
json bench_start_up(const Options& o) {
  json out;
  const std::string racelab = bench_program("racelab");
  if (::access(racelab.c_str(), X_OK) != 0 || ::access("/bin/true", X_OK) != 0) {
    out["skipped"] = racelab + " or /bin/true not found";
    return out;
  }
  const int runs = o.quick ? 5 : 20;
  std::vector<double> tru, version, exec;
  for (int i = 0; i < runs; ++i) {
    tru.push_back(launch_ms({"/bin/true"}));
    version.push_back(launch_ms({racelab, "version"}));
    exec.push_back(launch_ms({racelab, "exec", "-n", "1", "-q", "--", "/bin/true"}));
  }
  for (const auto* v : {&tru, &version, &exec})
    if (std::find(v->begin(), v->end(), -1.0) != v->end()) {
      out["skipped"] = "a run did not exit 0";
      return out;
    }
  const double t = median(tru), ver = median(version), ex = median(exec);
  out = {{"runs", runs},
         {"true_ms", t},
         {"version_ms", ver},
         {"exec_ms", ex},
         {"version_over_true", ver / std::max(1e-9, t)},
         {"exec_over_true", ex / std::max(1e-9, t)}};
  return out;
}

json jobs_speed_up(const std::vector<std::string>& cmd, int jobs, int runs) {
  json out;
  const std::string racelab = bench_program("racelab");
  std::vector<double> one, many;
  for (int i = 0; i < runs; ++i) {
    for (int j : {1, jobs}) {
      std::vector<std::string> argv = {racelab, cmd.front(), "-j", std::to_string(j)};
      argv.insert(argv.end(), cmd.begin() + 1, cmd.end());
      const double ms = launch_ms(argv);  // exit 1 (a race found) counts as a run too: see below
      (j == 1 ? one : many).push_back(ms);
    }
  }
  for (const auto* v : {&one, &many})
    if (std::find(v->begin(), v->end(), -1.0) != v->end()) {
      out["skipped"] = "a run did not exit 0 (the cell must hold)";
      return out;
    }
  const double a = median(one), b = median(many);
  out = {{"runs", runs}, {"jobs", jobs}, {"j1_ms", a}, {"jN_ms", b}, {"speed_up", a / std::max(1e-9, b)}};
  return out;
}

CellRun exec_cell(const std::vector<std::string>& argv, bool fork_server, const std::string& strategy, int64_t n) {
  ExecProgram p;
  p.argv = argv;
  p.fork_server = fork_server;
  CellSpec s;
  s.workload = kExecWorkload;
  s.knobs = exec_knobs(p);
  s.threads = 1;
  s.strategy = strategy;
  s.max_trials = 1;
  s.trial_timeout_s = 60;
  run(s);  // starts the worker (and the fork server): not part of the rate
  s.max_trials = n;
  return run(s);
}

json bench_exec(const Options& o) {
  json out;
  const std::string target = bench_program("racelab_exec_target");
  if (::access(target.c_str(), X_OK) != 0) {
    out["skipped"] = target + " not found (it is built with racelab)";
    return out;
  }
  const int64_t trials = o.quick ? 20 : 300;
  json rates;
  for (bool fork_server : {true, false}) {
    CellRun r = exec_cell({target, "2"}, fork_server, "random", trials);
    rates[fork_server ? "fork_server" : "exec_per_trial"] = {
        {"trials", r.summary.trials}, {"trials_per_s", r.summary.trials / std::max(1e-9, r.summary.wall_s)}};
  }
  rates["fork_server_over_exec"] = rates["fork_server"]["trials_per_s"].get<double>() /
                                   std::max(1e-9, rates["exec_per_trial"]["trials_per_s"].get<double>());
  out["trial_rate"] = rates;

  const std::string file = fmt::format("/tmp/racelab-bench-exec-{}.txt", ::getpid());
  auto native = [&](long pairs) {
    const std::string cmd = fmt::format("'{}' {} '{}'", target, pairs, file);
    std::vector<double> v;
    for (int i = 0; i < o.repeats; ++i)
      if (std::system(cmd.c_str()) == 0) v.push_back(read_ns(file));
    return median(v);
  };
  auto under = [&](long pairs, const std::string& strategy) {
    CellRun r = exec_cell({target, std::to_string(pairs), file}, true, strategy, o.repeats);
    (void)r;
    return read_ns(file);  // the last trial's own measurement
  };
  const long controlled_pairs = o.quick ? 200 : 2000, free_pairs = o.quick ? 20000 : 2000000;
  const double native_small = native(controlled_pairs), controlled = under(controlled_pairs, "random");
  out["lock_unlock"] = {{"pairs_per_thread", controlled_pairs},
                        {"native_ns", native_small},
                        {"controlled_ns", controlled},
                        {"controlled_over_native", controlled / std::max(1e-9, native_small)}};
  const double native_big = native(free_pairs), loaded = under(free_pairs, "os");
  out["free_running"] = {{"pairs_per_thread", free_pairs},
                         {"native_ns", native_big},
                         {"preloaded_ns", loaded},
                         {"preloaded_over_native", loaded / std::max(1e-9, native_big)}};
  std::remove(file.c_str());
  out["start_up"] = bench_start_up(o);
  // One cell's trials over 2 processes (-j 2) against one, on a program that holds.
  out["jobs"] = jobs_speed_up({"exec", "-n", o.quick ? "40" : "400", "-s", "random", "--no-progress", "--", target, "2"},
                              2, o.quick ? 1 : 3);
  return out;
}

}  // namespace racelab::cli::bench
