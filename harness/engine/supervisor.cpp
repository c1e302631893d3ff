#include "engine/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "engine/child_process.h"
#include "engine/run_trial.h"
#include "engine/self_exe.h"
#include "engine/tsan_report.h"
#include "engine/worker_channel.h"
#include "engine/zygote.h"

extern char** environ;

#if defined(__SANITIZE_THREAD__)
// Every binary with the engine in it: libtorch and libgomp are not built with
// TSan, so their accesses are invisible and produce false reports.
extern "C" const char* __tsan_default_options() { return "ignore_noninstrumented_modules=1"; }
#endif

namespace racelab {

namespace {

using Clock = std::chrono::steady_clock;

// Our pipe ends and the shared trace sit at 10 or above: never one of the
// worker's descriptors 0..5 (child_process.h).
constexpr int kParentFdFloor = 10;


// harness/tsan.supp: $RACELAB_TSAN_SUPP, the build's RACELAB_TSAN_SUPP, or the
// source tree found by walking up from the executable (build/<preset>/...).
std::string find_suppressions() {
  if (const char* env = std::getenv("RACELAB_TSAN_SUPP")) return env;
#ifdef RACELAB_TSAN_SUPP
  if (::access(RACELAB_TSAN_SUPP, R_OK) == 0) return RACELAB_TSAN_SUPP;
#endif
  std::string dir = executable_dir();
  for (int up = 0; up < 6; ++up) {
    std::string cand = dir + "/harness/tsan.supp";
    if (::access(cand.c_str(), R_OK) == 0) return cand;
    dir += "/..";
  }
  return "";
}

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return fmt::format("signal {} (SIG{})", sig, name ? name : "?");
}

// Signals the kernel sends a process for what its own code did.
bool is_fault_signal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP || sig == SIGSYS;
}

// Whether `worker` was killed by signal `sig` from outside rather than by what
// it ran; *how says which and why. The evidence, in order:
//  - its last words (worker_channel.h): a signal some other process sent
//    (si_pid not the worker) or the kernel sent for something other than a
//    fault (a terminal's Ctrl-C) is external; a fault, or a signal the worker
//    raised itself (abort(), raise()), is its own;
//  - no last words and SIGKILL, which no handler sees: external -- the OOM
//    killer or a `kill -9`. Code under test does not SIGKILL itself;
//  - no last words otherwise (the code under test replaced the handler):
//    its own, so a real crash is never explained away.
bool killed_from_outside(int sig, const LastWords& words, pid_t worker, std::string* how) {
  const bool spoke = words.signo.load() == sig;
  if (!spoke) {
    if (sig == SIGKILL) {
      *how = "killed from outside: " + signal_text(sig) + ", which no handler sees (the OOM killer or kill -9)";
      return true;
    }
    return false;
  }
  const int code = words.code.load();
  const pid_t sender = words.sender.load();
  if (code == SI_USER || code == SI_QUEUE || code == SI_TKILL) {
    if (sender == worker) return false;  // raise(), abort(), kill(getpid())
    *how = fmt::format("killed from outside: {} sent by process {}", signal_text(sig), sender);
    return true;
  }
  if (code > 0 && !is_fault_signal(sig)) {
    *how = fmt::format("killed from outside: {} sent by the kernel (si_code {}: a terminal, a resource limit)",
                       signal_text(sig), code);
    return true;
  }
  return false;
}

// Whether `pid` is stopped (SIGSTOP, SIGTSTP from outside): a stopped worker
// is not a hang of the code under test.
bool is_stopped(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WSTOPPED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid &&
      info.si_code == CLD_STOPPED)
    return true;
  // A stop already reported elsewhere: ask /proc ("pid (comm) T ...").
  std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r");
  if (f == nullptr) return false;
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const char* paren = std::strrchr(buf, ')');
  return n > 0 && paren != nullptr && paren[1] == ' ' && paren[2] == 'T';
}

}  // namespace

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {
  // The zygote forks this binary's worker, not another command's.
  if (!options_.worker_argv.empty()) options_.fork_from_zygote = false;
  if (options_.worker_argv.empty()) {
    options_.worker_argv = {"/proc/self/exe", "__worker"};
    if (options_.worker_name.empty()) options_.worker_name = "racelab: worker";
  }
}

Supervisor::~Supervisor() {
  stop();
  if (trace_ != nullptr) ::munmap(trace_, sizeof(SharedTrace));
  if (trace_fd_ >= 0) ::close(trace_fd_);
}

void Supervisor::start() {
  ::signal(SIGPIPE, SIG_IGN);  // a dead worker must be an error code, not our death
  if (trace_ == nullptr) {
    const int fd = ::memfd_create("racelab-trace", MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, sizeof(SharedTrace)) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      throw std::runtime_error(fmt::format("supervisor: shared trace: {}", std::strerror(err)));
    }
    trace_fd_ = move_fd_high(fd, kParentFdFloor, "supervisor: shared trace");
    void* p = ::mmap(nullptr, sizeof(SharedTrace), PROT_READ | PROT_WRITE, MAP_SHARED, trace_fd_, 0);
    if (p == MAP_FAILED) throw std::runtime_error(fmt::format("supervisor: mmap: {}", std::strerror(errno)));
    trace_ = static_cast<SharedTrace*>(p);
  }
  // A worker dies once: whatever last words the shared page holds are this worker's.
  trace_->last_words.signo.store(0);
  std::vector<Pipe> pipes = open_pipes(3, kParentFdFloor, "supervisor");
  Pipe& spec = pipes[0];
  Pipe& result = pipes[1];
  Pipe& output = pipes[2];

  ChildSpec child;
  child.argv = options_.worker_argv;
  child.shown_name = options_.worker_name;
  child.stdin_dev_null = true;
  child.dup2 = {{output.write_end, 1},
                {output.write_end, 2},
                {spec.read_end, kSpecFd},
                {result.write_end, kResultFd},
                {trace_fd_, kTraceFd}};
  // A process group of its own: a Ctrl-C at the terminal goes to racelab, which
  // lets the trial in flight finish, not to the worker, which would die of it mid-trial.
  child.own_process_group = true;
  // The worker checks it is still ours (worker.cpp). A supervisor inside a
  // worker (a workload that runs its own workers) passes on its own pid.
  child.parent_pid_env = kSupervisorPidEnv;
  // Our environment, with TSAN_OPTIONS as a worker built with TSan needs them.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "TSAN_OPTIONS=", 13) != 0) env.emplace_back(*e);
  if (built_with_tsan()) {
    std::string opts = std::getenv("TSAN_OPTIONS") ? std::getenv("TSAN_OPTIONS") : "";
    auto add = [&](const std::string& key, const std::string& value) {
      if (opts.find(key + "=") == std::string::npos) opts += (opts.empty() ? "" : " ") + key + "=" + value;
    };
    std::string supp = find_suppressions();
    if (!supp.empty()) add("suppressions", supp);
    add("ignore_noninstrumented_modules", "1");
    add("halt_on_error", "0");
    add("report_signal_unsafe", "0");
    // Report a race in every trial that has it, not once per worker process.
    add("suppress_equal_stacks", "0");
    add("suppress_equal_addresses", "0");
    env.push_back("TSAN_OPTIONS=" + opts);
  } else if (std::getenv("TSAN_OPTIONS")) {
    env.push_back(std::string("TSAN_OPTIONS=") + std::getenv("TSAN_OPTIONS"));
  }
  child.env = std::move(env);

  // The trainer's rank workers are forked by the zygote (engine/zygote.h),
  // which ran no autograd; where it cannot fork, they are spawned, as others are.
  std::string error;
  pid_t pid = -1;
  if (options_.fork_from_zygote) {
    std::string no_fork;
    pid = Zygote::shared().fork_worker({output.write_end, spec.read_end, result.write_end, trace_fd_},
                                       options_.worker_name, &no_fork);
    started_by_ = pid > 0 ? "zygote fork" : "spawn (" + no_fork + ")";
  } else {
    started_by_ = "spawn";
  }
  if (pid <= 0) pid = spawn_child(child, &error);
  close_fd(&spec.read_end);
  close_fd(&result.write_end);
  close_fd(&output.write_end);
  if (pid < 0) {
    close_fd(&spec.write_end);
    close_fd(&result.read_end);
    close_fd(&output.read_end);
    throw std::runtime_error("supervisor: " + error);
  }
  pid_ = pid;
  spec_fd_ = spec.write_end;
  result_fd_ = result.read_end;
  output_fd_ = output.read_end;
  result_buf_.clear();
  output_buf_.clear();
  began_a_trial_ = false;
  ++workers_started_;
}

void Supervisor::reap(int* status, bool kill_first) {
  if (pid_ < 0) return;
  if (spec_fd_ >= 0) ::close(spec_fd_);
  spec_fd_ = -1;
  if (kill_first) ::kill(pid_, SIGKILL);
  int st = 0;
  // A worker told to stop exits when its input closes; give it a moment.
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (true) {
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (status) *status = st;
  if (result_fd_ >= 0) ::close(result_fd_);
  if (output_fd_ >= 0) ::close(output_fd_);
  result_fd_ = output_fd_ = -1;
  pid_ = -1;
}

void Supervisor::stop() { reap(nullptr, false); }

bool Supervisor::ensure_started() {
  if (pid_ >= 0) return false;
  start();
  return true;
}

TrialResult Supervisor::recover(const TrialSpec& spec, Outcome outcome, const std::string& detail) {
  TrialResult r;
  r.outcome = outcome;
  r.detail = detail;
  if (trace_ != nullptr && trace_->trial.load() == spec.trial) {
    r.decisions = read_trace(*trace_);
    for (const auto& d : r.decisions) r.preemptions += d.preemption ? 1 : 0;
    r.steps = static_cast<int64_t>(r.decisions.size());
  }
  r.failing_step = r.steps;
  return r;
}

TrialResult Supervisor::could_not_start(const TrialSpec& spec, int status, const std::string& words) {
  std::string how = WIFSIGNALED(status) ? signal_text(WTERMSIG(status)) : fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127))
    how += ": its command could not be run";
  TrialResult r = recover(spec, Outcome::kError,
                          fmt::format("the worker could not start ({}): {}", how, words.empty() ? "it said nothing" : words));
  r.metrics["bad_input"] = true;
  return r;
}

std::string Supervisor::last_words_of_output(int ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  std::string buf = output_buf_;
  output_buf_.clear();
  char chunk[65536];
  while (output_fd_ >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd p{output_fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) break;
    ssize_t n = ::read(output_fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  std::deque<std::string> lines;
  size_t start = 0;
  while (start < buf.size()) {
    size_t nl = buf.find('\n', start);
    std::string l = buf.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!l.empty() && l.rfind("@@racelab-", 0) != 0) lines.push_back(l);
    if (lines.size() > 20) lines.pop_front();
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "; ") + l;
  return out;
}

TrialResult Supervisor::run(const TrialSpec& spec, double timeout_s) {
  nlohmann::json kills = nlohmann::json::array();
  for (int attempt = 0;; ++attempt) {
    std::string external;
    TrialResult r = run_once(spec, timeout_s, &external);
    if (external.empty()) {
      if (!kills.empty()) {
        r.metrics["retries"] = kills.size();
        r.metrics["external_kills"] = kills;
      }
      return r;
    }
    kills.push_back(external);
    if (attempt >= options_.external_kill_retries) {
      // Not the code under test's doing, so neither a failure nor a pass.
      TrialResult gave_up = std::move(r);
      gave_up.outcome = Outcome::kInfrastructure;
      gave_up.detail = fmt::format("the worker was killed from outside {} time(s) in a row; last: {}", kills.size(),
                                   external);
      gave_up.metrics["retries"] = kills.size() - 1;
      gave_up.metrics["external_kills"] = kills;
      return gave_up;
    }
    // The same spec, so the same seed and schedule, in a fresh worker.
  }
}

TrialResult Supervisor::run_once(const TrialSpec& spec, double timeout_s, std::string* external) {
  std::string line = spec.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (int attempt = 0;; ++attempt) {
    if (pid_ < 0) start();
    trace_->trial.store(spec.trial);
    trace_->count.store(0);
    if (write_all(spec_fd_, line)) break;
    if (!began_a_trial_) {
      // A fresh worker that is gone before it read its first spec could not start.
      const std::string words = last_words_of_output(2000);
      int status = 0;
      reap(&status, false);
      return could_not_start(spec, status, words);
    }
    reap(nullptr, true);  // it died between trials; a fresh one gets the spec
    if (attempt == 1) throw std::runtime_error("supervisor: worker rejects trial specs (dies at start-up?)");
  }
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  TsanParser tsan;
  std::deque<std::string> tail;
  std::string fatal_line;
  bool begun = false, ended = false, result_eof = false, output_eof = false;
  std::optional<TrialResult> result;
  std::string marker_begin = fmt::format("@@racelab-trial-begin {}", spec.trial);
  std::string marker_end = fmt::format("@@racelab-trial-end {}", spec.trial);

  auto handle_output_line = [&](const std::string& l) {
    if (l == marker_begin) {
      begun = true;
      began_a_trial_ = true;
      return;
    }
    if (l == marker_end) {
      ended = true;
      return;
    }
    if (l.rfind("@@racelab-trial-", 0) == 0) return;  // a previous trial's marker
    bool is_tsan = begun && !ended && tsan.feed(l);
    // A sanitizer's fatal report ("==N==ERROR: ThreadSanitizer: SEGV ...") or
    // std::terminate's message: kept apart, a long stack would push it out of the tail.
    if (fatal_line.empty() &&
        (l.find("ERROR: ") != std::string::npos || l.find("terminate called") != std::string::npos))
      fatal_line = l.substr(l.find_first_not_of(' ') == std::string::npos ? 0 : l.find_first_not_of(' '));
    if (!is_tsan) {
      tail.push_back(l);
      if (tail.size() > 20) tail.pop_front();
    }
    if (options_.pass_through_output) std::cerr << l << '\n';
  };
  auto read_some = [](int fd, std::string* buf) -> bool {  // false on EOF
    char chunk[65536];
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    buf->append(chunk, static_cast<size_t>(n));
    return true;
  };

  bool timed_out = false;
  while (!(result && (ended || output_eof)) && !(result_eof && output_eof)) {
    pollfd fds[2];
    int nfds = 0;
    if (!result && !result_eof) fds[nfds++] = {result_fd_, POLLIN, 0};
    if (!output_eof) fds[nfds++] = {output_fd_, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (result_eof) left = std::min<int64_t>(left, 2000);  // draining a dead worker's last words
    if (left <= 0) {
      timed_out = !result_eof;
      break;
    }
    int rc = ::poll(fds, static_cast<nfds_t>(nfds), static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) continue;  // loop re-checks the deadline
    for (int i = 0; i < nfds; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fds[i].fd == output_fd_) {
        if (!read_some(output_fd_, &output_buf_)) output_eof = true;
        size_t nl;
        while ((nl = output_buf_.find('\n')) != std::string::npos) {
          handle_output_line(output_buf_.substr(0, nl));
          output_buf_.erase(0, nl + 1);
        }
      } else {
        if (!read_some(result_fd_, &result_buf_)) result_eof = true;
        size_t nl = result_buf_.find('\n');
        if (nl != std::string::npos) {
          std::string rec = result_buf_.substr(0, nl);
          result_buf_.erase(0, nl + 1);
          const nlohmann::json j = nlohmann::json::parse(rec);
          result = TrialResult::from_json(j);
          if (j.value("decisions_in_trace", false) && trace_->trial.load() == spec.trial)
            result->decisions = read_trace(*trace_);
        }
      }
    }
  }

  TrialResult r;
  if (result) {
    r = std::move(*result);
    if (r.process_tainted) reap(nullptr, false);  // it exits by itself after a lost thread
  } else if (timed_out) {
    const bool stopped = is_stopped(pid_);
    reap(nullptr, true);
    r = recover(spec, Outcome::kHang,
                fmt::format("worker did not finish the trial within {:g} s and was killed", timeout_s));
    r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (stopped) *external = "stopped from outside (SIGSTOP or SIGTSTP) and killed at the trial timeout";
  } else {
    int status = 0;
    const pid_t worker = pid_;
    reap(&status, false);
    std::string how = WIFSIGNALED(status) ? signal_text(WTERMSIG(status))
                                          : fmt::format("exit status {}", WEXITSTATUS(status));
    if (WIFSIGNALED(status) && killed_from_outside(WTERMSIG(status), trace_->last_words, worker, &how))
      *external = how;
    // Sanitizers turn a fatal signal into a report and an exit code; name it.
    if (!fatal_line.empty()) how += "; " + fatal_line;
    if (!begun && external->empty() &&
        (!began_a_trial_ || (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerBadEnvironmentExit))) {
      // The worker refused to start, or died starting: no trial ran, so
      // nothing of the program failed. Its own words say why.
      std::string words;
      for (const auto& l : tail) words += (words.empty() ? "" : "; ") + l;
      TrialResult bad = could_not_start(spec, status, words);
      bad.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      return bad;
    }
    r = recover(spec, Outcome::kCrash, "worker died: " + how);
    r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    r.metrics["output_tail"] = std::vector<std::string>(tail.begin(), tail.end());
  }
  note_tsan_races(tsan.races(), &r);
  return r;
}

namespace {
std::atomic<bool> g_default_from_zygote{false};
}  // namespace

void fork_default_workers_from_zygote() {
  Zygote::shared().prefork(Zygote::Serves::kTrialWorkers);
  g_default_from_zygote.store(true);
}

Supervisor& default_supervisor() {
  static Supervisor supervisor([] {
    SupervisorOptions o;
    o.fork_from_zygote = g_default_from_zygote.load();
    return o;
  }());
  return supervisor;
}

}  // namespace racelab
