// engine/exec_worker.cpp -- `racelab __exec-worker`: the exec host's worker.
// Toward the supervisor it is a worker like `__worker` (specs in, results out,
// the shared trace on fd 5); toward the program it is the other half of
// engine/exec_protocol.h. It classifies each trial from what the program's
// trial process reported, its exit status and its output.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/child_process.h"
#include "engine/exec_host.h"
#include "engine/exec_protocol.h"
#include "engine/tsan_report.h"
#include "engine/worker_channel.h"
#include "racelab/exit_code.h"

extern char** environ;

namespace racelab {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr size_t kOutputKeep = 1 << 20;  // output kept per trial for --fail-on-output

// Our pipe ends and the report page sit at 300 or above: never one of the
// descriptors the program is given (exec_protocol.h: 200..203).
constexpr int kParentFdFloor = 300;

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return fmt::format("signal {} (SIG{})", sig, name ? name : "?");
}

// The program, started with the preload library, and the pipes to it.
struct Program {
  pid_t pid = -1;
  int to = -1;      // -> kExecCtlIn
  int from = -1;    // <- kExecCtlOut
  int output = -1;  // <- its stdout and stderr
  std::string from_buf;

  void close_all() {
    for (int* fd : {&to, &from, &output})
      if (*fd >= 0) ::close(*fd), *fd = -1;
  }
};

class ExecWorker {
 public:
  ExecWorker(std::vector<std::string> argv, bool fork_server, SharedTrace* trace)
      : argv_(std::move(argv)), fork_server_(fork_server), trace_(trace) {
    const int fd = ::memfd_create("racelab-exec-report", MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, sizeof(ExecReport)) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      throw std::runtime_error(fmt::format("exec worker: report memfd: {}", std::strerror(err)));
    }
    report_fd_ = move_fd_high(fd, kParentFdFloor, "exec worker: report page");
    void* p = ::mmap(nullptr, sizeof(ExecReport), PROT_READ | PROT_WRITE, MAP_SHARED, report_fd_, 0);
    if (p == MAP_FAILED) throw std::runtime_error("exec worker: mmap");
    report_ = static_cast<ExecReport*>(p);
    preload_ = preload_library();
  }

  // `line`: the spec as the supervisor sent it (one JSON line, with its
  // newline), passed on to the program as it is.
  TrialResult run(const TrialSpec& spec, const std::string& line);

 private:
  // Starts the program with the knobs' environment; false (and *why) when it
  // never says hello from main.
  bool start(const json& knobs, std::string* why);
  void stop(bool kill_it);
  bool read_line(Program& p, std::string* line, Clock::time_point deadline, std::string* output);
  void drain_output(std::string* output, int timeout_ms);
  TrialResult classify(const TrialSpec& spec, int status, bool killed, const std::string& output,
                       Clock::time_point t0);

  std::vector<std::string> argv_;
  bool fork_server_;
  SharedTrace* trace_;
  ExecReport* report_ = nullptr;
  int report_fd_ = -1;
  std::string preload_;
  Program prog_;
};

bool ExecWorker::start(const json& knobs, std::string* why) {
  std::vector<Pipe> pipes = open_pipes(3, kParentFdFloor, "exec worker");
  Pipe& to = pipes[0];
  Pipe& from = pipes[1];
  Pipe& out = pipes[2];
  ChildSpec child;
  child.argv = argv_;
  child.stdin_dev_null = true;
  child.dup2 = {{out.write_end, 1},          {out.write_end, 2},           {to.read_end, kExecCtlIn},
                {from.write_end, kExecCtlOut}, {kTraceFd, kExecTraceFd}, {report_fd_, kExecReportFd}};
  child.close = {kSpecFd, kResultFd, kTraceFd};

  std::vector<std::string> env;
  std::string preload_was;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) == 0) {
      preload_was = *e + 11;
      continue;
    }
    if (std::strncmp(*e, "RACELAB_", 8) == 0) continue;
    env.emplace_back(*e);
  }
  // The knobs' environment (engine/exec_host.h: env) over the inherited one;
  // its LD_PRELOAD loads after the shim, and stays for the program's children.
  if (knobs.contains("env") && knobs["env"].is_object())
    for (auto it = knobs["env"].begin(); it != knobs["env"].end(); ++it) {
      if (!it.value().is_string()) continue;
      const std::string value = it.value().get<std::string>();
      if (it.key() == "LD_PRELOAD") {
        if (!value.empty()) preload_was = value + (preload_was.empty() ? "" : ":" + preload_was);
        continue;
      }
      const std::string prefix = it.key() + "=";
      env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }),
                env.end());
      env.push_back(prefix + value);
    }
  env.push_back("LD_PRELOAD=" + preload_ + (preload_was.empty() ? "" : ":" + preload_was));
  env.push_back(fmt::format("{}={}", kExecEnv, fork_server_ ? "fork" : "single"));
  env.push_back(fmt::format("{}={}", kExecPreloadWasEnv, preload_was));
  child.env = std::move(env);
  const pid_t pid = spawn_child(child, why);
  close_fd(&to.read_end);
  close_fd(&from.write_end);
  close_fd(&out.write_end);
  prog_ = Program{};
  prog_.to = to.write_end;
  prog_.from = from.read_end;
  prog_.output = out.read_end;
  if (pid < 0) {
    prog_.close_all();
    return false;
  }
  prog_.pid = pid;
  std::string line, output;
  if (read_line(prog_, &line, Clock::now() + std::chrono::seconds(60), &output) && line.rfind("hello", 0) == 0)
    return true;
  drain_output(&output, 200);
  int status = 0;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  prog_.close_all();
  prog_.pid = -1;
  std::string how = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                      : signal_text(WTERMSIG(status));
  while (!output.empty() && output.back() == '\n') output.pop_back();
  *why = fmt::format(
      "program {} never reached main under racelab's preload library ({}{}): it may do all its work before main, "
      "be setuid, or not load the library{}",
      argv_[0], how, output.empty() ? "" : "; output: " + output.substr(output.size() > 300 ? output.size() - 300 : 0),
      fork_server_ ? "" : "");
  return false;
}

void ExecWorker::stop(bool kill_it) {
  if (prog_.pid < 0) return;
  if (kill_it) ::kill(prog_.pid, SIGKILL);
  prog_.close_all();  // a fork server ends when its input closes
  int status = 0;
  ::waitpid(prog_.pid, &status, 0);
  prog_.pid = -1;
}

// Reads a control line, collecting output meanwhile; false on EOF or deadline.
bool ExecWorker::read_line(Program& p, std::string* line, Clock::time_point deadline, std::string* output) {
  for (;;) {
    size_t nl = p.from_buf.find('\n');
    if (nl != std::string::npos) {
      *line = p.from_buf.substr(0, nl);
      p.from_buf.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{p.from, POLLIN, 0}, {p.output, POLLIN, 0}};
    int n = ::poll(fds, p.output >= 0 ? 2 : 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    char chunk[65536];
    if (p.output >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
      ssize_t got = ::read(p.output, chunk, sizeof(chunk));
      if (got > 0) {
        output->append(chunk, static_cast<size_t>(got));
        if (output->size() > 2 * kOutputKeep) output->erase(0, output->size() - kOutputKeep);
      } else if (got == 0) {
        ::close(p.output);
        p.output = -1;
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = ::read(p.from, chunk, sizeof(chunk));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      p.from_buf.append(chunk, static_cast<size_t>(got));
    }
  }
}

// What the trial wrote before the status came: it is in the pipe already.
void ExecWorker::drain_output(std::string* output, int timeout_ms) {
  while (prog_.output >= 0) {
    pollfd fd = {prog_.output, POLLIN, 0};
    if (::poll(&fd, 1, timeout_ms) <= 0) return;
    char chunk[65536];
    ssize_t got = ::read(prog_.output, chunk, sizeof(chunk));
    if (got <= 0) {
      ::close(prog_.output);
      prog_.output = -1;
      return;
    }
    output->append(chunk, static_cast<size_t>(got));
    timeout_ms = 0;
  }
}

TrialResult ExecWorker::run(const TrialSpec& spec, const std::string& line) {
  report_->size.store(0);
  report_->pid.store(0);
  const auto t0 = Clock::now();
  // The trial process's own watchdog reports a hang (by CPU time and sleep);
  // this deadline is for a process that cannot even do that.
  const double backstop_s = exec_backstop_s(spec.watchdog_s);
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(backstop_s));
  std::string why;
  if (prog_.pid < 0 && !start(spec.knobs, &why)) {
    TrialResult r;
    r.outcome = Outcome::kError;
    r.detail = why;
    r.metrics["bad_input"] = true;
    return r;
  }
  std::string output, reply;
  if (!write_all(prog_.to, line)) {
    stop(true);
    throw std::runtime_error("exec worker: the program stopped reading trial specs");
  }
  int status = 0;
  bool killed = false;
  if (fork_server_) {
    if (!read_line(prog_, &reply, deadline, &output)) {
      const pid_t child = report_->pid.load(std::memory_order_acquire);
      if (child <= 0) {
        stop(true);
        throw std::runtime_error("exec worker: the fork server did not start the trial");
      }
      ::kill(child, SIGKILL);
      killed = true;
      if (!read_line(prog_, &reply, Clock::now() + std::chrono::seconds(10), &output)) {
        stop(true);
        throw std::runtime_error("exec worker: the fork server stopped answering");
      }
    }
    if (reply.rfind("status ", 0) != 0) {
      stop(true);
      throw std::runtime_error("exec worker: the fork server did not start the trial: " + reply);
    }
    status = std::atoi(reply.c_str() + 7);
    drain_output(&output, 0);
  } else {
    ::close(prog_.to);
    prog_.to = -1;
    // The program runs one trial and ends: collect its output until it does.
    for (;;) {
      pid_t r = ::waitpid(prog_.pid, &status, WNOHANG);
      if (r == prog_.pid) break;
      if (Clock::now() > deadline && !killed) {
        ::kill(prog_.pid, SIGKILL);
        killed = true;
      }
      std::string ignored;
      read_line(prog_, &ignored, Clock::now() + std::chrono::milliseconds(20), &output);
    }
    drain_output(&output, 50);
    prog_.close_all();
    prog_.pid = -1;
  }
  return classify(spec, status, killed, output, t0);
}

TrialResult ExecWorker::classify(const TrialSpec& spec, int status, bool killed, const std::string& output,
                                 Clock::time_point t0) {
  TrialResult r;
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (trace_->trial.load() == spec.trial) r.decisions = read_trace(*trace_);
  r.steps = static_cast<int64_t>(r.decisions.size());
  for (const auto& d : r.decisions) r.preemptions += d.preemption ? 1 : 0;
  json rep;
  if (uint32_t n = report_->size.load(std::memory_order_acquire); n > 0)
    rep = json::parse(std::string(report_->json, n), nullptr, false);
  if (rep.is_discarded()) rep = json();
  if (rep.is_object()) {
    r.managed_threads = rep.value("threads", 0);
    // Synchronisation the preload saw pass by without control (harness/preload/unseen.h).
    if (rep.contains("unseen_sync") && rep["unseen_sync"].is_object() && !rep["unseen_sync"].empty())
      r.metrics["unseen_sync"] = rep["unseen_sync"];
    for (const auto& e : rep.value("events", json::array()))
      r.events.push_back(Event{e.at("step").get<int64_t>(), e.at("thread").get<int>(), e.at("kind").get<std::string>(),
                               e.value("what", "")});
  }
  // Output lines: the tail for people, all of it for the user's oracle.
  std::vector<std::string> lines;
  {
    size_t start = 0;
    while (start < output.size()) {
      size_t nl = output.find('\n', start);
      if (nl == std::string::npos) nl = output.size();
      lines.push_back(output.substr(start, nl - start));
      start = nl + 1;
    }
  }
  auto last_line = [&]() -> std::string {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
      if (!it->empty()) return "; last output: " + *it;
    return "";
  };
  const int expect_exit = spec.knobs.value("expect_exit", 0);
  if (rep.is_object() && rep.value("aborted", false)) {
    if (!parse_outcome(rep.value("outcome", "error"), &r.outcome)) r.outcome = Outcome::kError;
    r.detail = rep.value("detail", "");
    r.failing_step = rep.value("failing_step", r.steps);
    // A spec it cannot run, or a program beyond what racelab schedules: exit 3.
    if (r.detail.rfind("racelab preload: bad", 0) == 0) r.metrics["bad_input"] = true;
  } else if (!rep.is_object() && !killed && !WIFSIGNALED(status) &&
             spec.strategy.is_object() && spec.strategy.value("kind", "") == "replay") {
    // A replay is judged by whether the run followed its schedule, which only
    // the trial process's report says: without it the replay proves nothing.
    r.outcome = Outcome::kDivergence;
    r.detail = "the trial process ended without its report (it called _exit, or the report could not be written), "
               "so whether the run followed the schedule cannot be checked";
  } else if (killed) {
    r.outcome = Outcome::kHang;
    r.detail = fmt::format("the trial process did not end within {:g} s of wall time and was killed (the wall-clock "
                           "backstop: its own watchdog never reported)",
                           exec_backstop_s(spec.watchdog_s));
  } else if (WIFSIGNALED(status)) {
    r.outcome = Outcome::kCrash;
    r.detail = fmt::format("the program died of {}{}", signal_text(WTERMSIG(status)), last_line());
    r.metrics["signal"] = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != expect_exit) {
    r.outcome = Outcome::kError;
    r.detail = fmt::format("exit status {} (expected {}){}", WEXITSTATUS(status), expect_exit, last_line());
  }
  if (WIFEXITED(status)) r.metrics["exit_status"] = WEXITSTATUS(status);
  const std::string pattern = spec.knobs.value("fail_on_output", "");
  if (!pattern.empty()) {
    const std::regex re = output_pattern(pattern);  // checked with the knobs; bounded (engine/exec_host.h)
    for (const auto& l : lines) {
      if (!output_matches(re, l)) continue;
      if (outcome_rank(Outcome::kWrongResult) > outcome_rank(r.outcome)) {
        r.outcome = Outcome::kWrongResult;
        r.detail = fmt::format("output matched --fail-on-output '{}': {}", pattern, l);
      }
      break;
    }
  }
  // A program built with ThreadSanitizer (libtsan, not racelab-cc's runtime)
  // reports on its stderr, which is in `output`.
  TsanParser tsan;
  for (const auto& l : lines) tsan.feed(l);
  note_tsan_races(tsan.races(), &r);
  if (is_failure(r.outcome)) {
    if (r.failing_step < 0) r.failing_step = r.steps;
    std::vector<std::string> tail(lines.size() > 20 ? lines.end() - 20 : lines.begin(), lines.end());
    r.metrics["output_tail"] = tail;
  }
  return r;
}

}  // namespace

int exec_worker_main(const std::vector<std::string>& program, bool fork_server) {
  struct stat st;
  if (::fstat(kSpecFd, &st) != 0 || ::fstat(kResultFd, &st) != 0 || ::fstat(kTraceFd, &st) != 0) {
    std::fprintf(stderr, "racelab __exec-worker: internal command, started only by the supervisor\n");
    return kExitUsage;
  }
  auto* trace =
      static_cast<SharedTrace*>(::mmap(nullptr, sizeof(SharedTrace), PROT_READ | PROT_WRITE, MAP_SHARED, kTraceFd, 0));
  if (trace == MAP_FAILED) return kExitInternal;
  // Dies with the supervisor, as a `__worker` does (worker.cpp).
  if (!die_with_parent(kSupervisorPidEnv)) ::_exit(0);
  ::signal(SIGPIPE, SIG_IGN);
  ExecWorker worker(program, fork_server, trace);
  FILE* in = ::fdopen(kSpecFd, "r");
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t got;
  while ((got = ::getline(&buf, &cap, in)) > 0) {
    std::string line(buf, static_cast<size_t>(got));
    if (line.back() != '\n') line += '\n';
    TrialResult r;
    int64_t trial = -1;
    try {
      TrialSpec spec = TrialSpec::from_json(json::parse(buf));
      trial = spec.trial;
      // The supervisor reads a trial's output between these markers.
      std::fprintf(stderr, "@@racelab-trial-begin %lld\n", static_cast<long long>(trial));
      std::fflush(stderr);
      r = worker.run(spec, line);
    } catch (const ExecError& e) {
      r.outcome = Outcome::kError;
      r.detail = e.what();
      r.metrics["bad_input"] = true;
    } catch (const json::exception& e) {
      r.outcome = Outcome::kError;
      r.detail = std::string("exec worker: bad trial spec: ") + e.what();
      r.metrics["bad_input"] = true;
    }
    // The decisions are in the shared trace already (the supervisor reads
    // them there), and the result is ready before the end marker goes out,
    // so the supervisor finds both at once.
    const bool in_trace = trace->trial.load() == trial;
    if (in_trace) r.decisions.clear();
    json out = r.to_json();
    if (in_trace) out["decisions_in_trace"] = true;
    // The program's output (detail, output_tail) is any bytes: invalid UTF-8 is
    // replaced, or dump() would throw and the worker die for the program's words.
    const std::string result = out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::fprintf(stderr, "@@racelab-trial-end %lld\n", static_cast<long long>(trial));
    std::fflush(stderr);
    if (!write_all(kResultFd, result)) return 0;
  }
  std::free(buf);
  return 0;
}

}  // namespace racelab
