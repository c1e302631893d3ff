// racelab under faults from outside, as a hostile operator or machine deals
// them: every test runs the real binary, does something to it, and checks the
// exit code and that every file left behind is whole -- report.json parses, no
// `*.tmp` is left, every JSONL line is a complete object.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "racelab/exit_code.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string temp_dir() {
  std::string t = (fs::temp_directory_path() / "racelab-faults-XXXXXX").string();
  if (::mkdtemp(t.data()) == nullptr) std::abort();
  return t;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Starts racelab with `args`, its output in `log`; in a process group of its
// own when `own_group` (as a shell job: a terminal's Ctrl-C goes to the group).
pid_t spawn(const std::vector<std::string>& args, const std::string& log, bool own_group = false) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (own_group) ::setpgid(0, 0);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<std::string> all = {RACELAB_EXE};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> av;
    for (auto& a : all) av.push_back(a.data());
    av.push_back(nullptr);
    ::execv(av[0], av.data());
    ::_exit(127);
  }
  return pid;
}

// A death by signal S, told apart from an exit code.
constexpr int kKilledBy = 1000;

// The exit code (kKilledBy + S for a death by signal S), or -1 if still running at the deadline.
int wait_exit(pid_t pid, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : kKilledBy + WTERMSIG(st);
    if (r < 0) return -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

int run_racelab(const std::vector<std::string>& args, const std::string& log, double timeout_s = 100) {
  const pid_t pid = spawn(args, log);
  const int code = wait_exit(pid, timeout_s);
  if (code == -1) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  return code;
}

// The children of `parent` whose command line contains `needle`.
std::vector<pid_t> children(pid_t parent, const std::string& needle = "") {
  std::vector<pid_t> out;
  std::ifstream in("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) + "/children");
  for (pid_t p; in >> p;) {
    std::string cmd = slurp("/proc/" + std::to_string(p) + "/cmdline");
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(needle) != std::string::npos) out.push_back(p);
  }
  return out;
}

pid_t wait_for_worker(pid_t parent, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    const auto w = children(parent, "__worker");
    if (!w.empty()) return w.front();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// Every file under `dir` is whole: no temporary left, every JSON file parses,
// every JSONL file is complete lines of JSON objects.
void expect_files_whole(const std::string& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string();
    EXPECT_NE(e.path().extension(), ".tmp") << "left behind: " << p;
    if (e.path().extension() == ".json") {
      EXPECT_FALSE(json::parse(slurp(p), nullptr, false).is_discarded()) << "not whole JSON: " << p;
    } else if (e.path().extension() == ".jsonl") {
      const std::string text = slurp(p);
      EXPECT_TRUE(text.empty() || text.back() == '\n') << "torn last line: " << p;
      std::istringstream in(text);
      int n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        EXPECT_TRUE(json::parse(line, nullptr, false).is_object()) << p << ":" << n << ": not a JSON object";
      }
    }
  }
}

std::vector<json> jsonl(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(slurp(path));
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

const std::string kCampaign = std::string(FAULTS_DATA) + "/campaign.json";

std::vector<std::string> compare_args(const std::string& out, int jobs = 2) {
  return {"compare", kCampaign, "--out", out, "-j", std::to_string(jobs), "--no-progress", "--no-minimize"};
}

// Waits until `parent` has started its shards (their handlers are not set yet:
// they are still loading LibTorch). False after `timeout_s`.
bool wait_for_shards(pid_t parent, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (Clock::now() < deadline) {
    if (children(parent, "--shard").size() >= 2) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// SIGINT `delay_s` after the start (or after the shards started, with
// `after_shards`), to compare alone or to its whole process group as a
// terminal's Ctrl-C. Then: exit 130 and a report of what finished (0 and a
// complete one, had it finished). A signal that lands before racelab's main()
// (loading LibTorch takes a second or more) ends it as the signal does, before
// it has written anything, which is checked too.
void interrupt_compare(double delay_s, bool whole_group, bool after_shards = false) {
  const std::string out = temp_dir();
  const pid_t pid = spawn(compare_args(out + "/report"), out + "/log.txt", whole_group);
  if (after_shards) {
    ASSERT_TRUE(wait_for_shards(pid, 60)) << slurp(out + "/log.txt");
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(delay_s));
  ::kill(whole_group ? -pid : pid, SIGINT);
  const int code = wait_exit(pid, 90);
  if (code == -1) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  SCOPED_TRACE(::testing::Message() << "SIGINT " << delay_s << " s after " << (after_shards ? "the shards started" : "the start")
                                    << (whole_group ? ", to the group" : "") << "; log:\n" << slurp(out + "/log.txt"));
  if (code == kKilledBy + SIGINT && !after_shards) {
    EXPECT_FALSE(fs::exists(out + "/report")) << "killed before main(), yet it wrote";
  } else {
    ASSERT_TRUE(code == racelab::kExitInterrupted || code == racelab::kExitOk) << "exit " << code;
    const json report = json::parse(slurp(out + "/report/report.json"), nullptr, false);
    ASSERT_TRUE(report.is_object()) << "no report.json";
    EXPECT_EQ(report["campaign"]["interrupted"].get<bool>(), code == racelab::kExitInterrupted);
  }
  expect_files_whole(out);
  fs::remove_all(out);
}

// ---- Ctrl-C ------------------------------------------------------------------

TEST(Faults, AnInterruptWhileTheShardsStartStillLeavesAReport) {
  // The shards are still loading LibTorch: their handlers are not set yet.
  interrupt_compare(0, false, true);
}

TEST(Faults, AnInterruptAtRandomMomentsLeavesAReport) {
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> delay(0.1, 5.0);
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  for (int i = 0; i < 3; ++i) interrupt_compare(delay(rng), false);
}

TEST(Faults, ACtrlCAtTheTerminalReachesEveryProcessAndStillLeavesAReport) {
  std::mt19937 rng(std::random_device{}());
  interrupt_compare(std::uniform_real_distribution<double>(0.0, 2.0)(rng), true, true);
}

// ---- Ctrl-C in the commands that run one cell (issue 38) -------------------------
// They died by the signal, with no summary; compare and ci wrote theirs. Now
// every one lets the trial in flight end, prints its summary of the trials so
// far and exits 130 (campaign/interrupt.h).

bool wait_until(const std::function<bool()>& cond, double timeout_s);  // below

size_t line_count(const std::string& path) {
  const std::string text = slurp(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The N of the first "(F/N)" after `label` in `text`, or -1.
long long count_after(const std::string& text, const std::string& label) {
  const size_t at = text.find(label);
  if (at == std::string::npos) return -1;
  const size_t slash = text.find('/', at), close = text.find(')', at);
  if (slash == std::string::npos || close == std::string::npos || close < slash) return -1;
  return std::atoll(text.substr(slash + 1, close - slash - 1).c_str());
}

// Starts racelab with `args` in a process group of its own, as a shell job,
// waits until it has ended a trial (a line in `results`) or, without
// `results`, has started its worker, then sends SIGINT to the whole group as a
// terminal's Ctrl-C does. Returns its exit code and output.
std::pair<int, std::string> ctrl_c_during(const std::vector<std::string>& args, const std::string& dir,
                                          const std::string& results) {
  const std::string log = dir + "/log.txt";
  const pid_t pid = spawn(args, log, /*own_group=*/true);
  const bool running = results.empty() ? wait_for_worker(pid, 60) > 0
                                       : wait_until([&] { return line_count(results) > 0; }, 60);
  if (running) ::kill(-pid, SIGINT);
  int code = wait_exit(pid, 90);
  if (code == -1) ::kill(-pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  EXPECT_TRUE(running) << "it never ran a trial:\n" << slurp(log);
  return {code, slurp(log)};
}

TEST(Faults, CtrlCDuringRunPrintsTheSummarySoFarAndExits130) {
  const std::string dir = temp_dir();
  const std::string results = dir + "/results.jsonl";
  const auto [code, log] = ctrl_c_during({"run", "direct_leak", "-m", "global_lock", "-s", "random", "-n", "1000000",
                                          "--results", results},
                                         dir, results);
  EXPECT_EQ(code, racelab::kExitInterrupted) << log;
  // The summary counts exactly the trials recorded: the one in flight ended, none started after.
  EXPECT_EQ(count_after(log, "failure rate"), static_cast<long long>(line_count(results))) << log;
  EXPECT_NE(log.find("interrupted: the summary above covers the"), std::string::npos) << log;
  expect_files_whole(dir);
  fs::remove_all(dir);
}

TEST(Faults, CtrlCDuringExecPrintsTheSummarySoFarAndExits130) {
  const std::string dir = temp_dir();
  const std::string results = dir + "/results.jsonl";
  const auto [code, log] = ctrl_c_during({"exec", "-n", "1000000", "--results", results, "--", "/bin/true"}, dir,
                                         results);
  EXPECT_EQ(code, racelab::kExitInterrupted) << log;
  EXPECT_EQ(count_after(log, "failure rate"), static_cast<long long>(line_count(results))) << log;
  EXPECT_NE(log.find("interrupted: the summary above covers the"), std::string::npos) << log;
  fs::remove_all(dir);
}

TEST(Faults, CtrlCDuringReproducePrintsTheSummarySoFarAndExits130) {
  const std::string dir = temp_dir();
  const std::string results = dir + "/results.jsonl";
  // global_lock holds: the search would go on for a million trials.
  const auto [code, log] = ctrl_c_during({"reproduce", "direct_leak", "-m", "global_lock", "-s", "random", "-n",
                                          "1000000", "--results", results, "-o", dir + "/s.json"},
                                         dir, results);
  EXPECT_EQ(code, racelab::kExitInterrupted) << log;
  EXPECT_NE(log.find("not reproduced in " + std::to_string(line_count(results)) + " trials"), std::string::npos)
      << log;
  EXPECT_NE(log.find("interrupted: the summary above covers the"), std::string::npos) << log;
  fs::remove_all(dir);
}

TEST(Faults, CtrlCDuringReplayPrintsTheReplaysSoFarAndExits130) {
  const std::string dir = temp_dir();
  const std::string schedule = dir + "/leak.json";
  ASSERT_EQ(run_racelab({"reproduce", "direct_leak", "-m", "none", "-s", "random", "-n", "50", "--in-process",
                         "--no-minimize", "-o", schedule},
                        dir + "/found.txt"),
            racelab::kExitExpectationFailed)
      << slurp(dir + "/found.txt");
  const auto [code, log] = ctrl_c_during({"replay", schedule, "-n", "1000000"}, dir, "");
  EXPECT_EQ(code, racelab::kExitInterrupted) << log;
  EXPECT_NE(log.find("replayed direct_leak "), std::string::npos) << log;
  EXPECT_NE(log.find("interrupted: the summary above covers "), std::string::npos) << log;
  EXPECT_NE(log.find(" of the 1000000 replays asked for"), std::string::npos) << log;
  fs::remove_all(dir);
}

// A Python with torch, as tests/pytorch/torch_check.sh finds one: $RACELAB_PYTHON,
// else the torch root of ci/setup-torch (as root); "" when there is none.
std::string python_with_torch() {
  const char* env = std::getenv("RACELAB_PYTHON");
  if (env != nullptr && *env != '\0') return env;
  const char* root = std::getenv("RACELAB_TORCH_ROOT");
  const std::string torch_root = root != nullptr ? root : "/var/cache/racelab/torch-trixie";
  if (!fs::exists(torch_root + "/.racelab-packages") || ::getuid() != 0) return "";
  return "bash " RACELAB_SOURCE_DIR "/ci/in-torch-root -- python3";
}

TEST(Faults, CtrlCDuringPyrunPrintsTheSummarySoFarAndExits130) {
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no Python with torch (RACELAB_PYTHON, or bash ci/setup-torch)";
  const std::string dir = temp_dir();
  const std::string results = dir + "/results.jsonl";
  // A script that ends at once, named from the source tree, where the torch
  // root's Python sees it too (its paths are not this machine's).
  const fs::path here = fs::current_path();
  fs::current_path(RACELAB_SOURCE_DIR);
  const auto [code, log] = ctrl_c_during({"pyrun", "--python", python, "-n", "1000000", "--timeout", "240", "--results",
                                          results, "--", "tests/pytorch/scripts/exit_status.py", "sys_exit", "0"},
                                         dir, results);
  fs::current_path(here);
  EXPECT_EQ(code, racelab::kExitInterrupted) << log;
  EXPECT_EQ(count_after(log, "failure rate"), static_cast<long long>(line_count(results))) << log;
  EXPECT_NE(log.find("interrupted: the summary above covers the"), std::string::npos) << log;
  fs::remove_all(dir);
}

// ---- a killed parent ---------------------------------------------------------

TEST(Faults, AKilledCompareLeavesNoShardOrWorkerRunning) {
  // Orphans come to us instead of init, so we can see them all end.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string out = temp_dir();
  const pid_t pid = spawn(compare_args(out + "/report"), out + "/log.txt");
  // Wait until a shard runs trials in a worker of its own.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  bool working = false;
  while (!working && Clock::now() < deadline) {
    // A shard forks its workers from a zygote (engine/zygote.h): they show its
    // command line, and their name.
    for (pid_t shard : children(pid, "--shard"))
      for (pid_t child : children(shard)) working |= slurp("/proc/" + std::to_string(child) + "/comm") == "racelab: worker\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(working) << slurp(out + "/log.txt");
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  // Every shard and worker must end by itself, long before the campaign would.
  const auto end_by = Clock::now() + std::chrono::seconds(30);
  bool all_gone = false;
  while (!all_gone && Clock::now() < end_by) {
    const pid_t r = ::waitpid(-1, nullptr, WNOHANG);
    if (r < 0 && errno == ECHILD) all_gone = true;
    else if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(all_gone) << "shards or workers outlived their parent";
  for (pid_t left : children(::getpid())) ::kill(left, SIGKILL);  // on failure only: clean up
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  // The shards stopped as for a Ctrl-C: their results are whole and say so.
  expect_files_whole(out);
  for (const auto& e : fs::recursive_directory_iterator(out + "/report/shards")) {
    if (e.path().extension() != ".jsonl") continue;
    const auto lines = jsonl(e.path().string());
    ASSERT_FALSE(lines.empty());
    EXPECT_TRUE(lines.back().contains("end")) << e.path() << " has no end line";
  }
  fs::remove_all(out);
}

// ---- workers killed, stopped, sent a fault signal from outside ----------------

bool process_stopped(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");  // "pid (comm) T ..."
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'T';
}

bool wait_until(const std::function<bool()>& cond, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (!cond()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Bytes written to the pipe at `worker`'s descriptor `fd` and not yet read
// (-1 if it cannot be seen): opened through /proc, the same pipe.
int unread_in_pipe(pid_t worker, int fd) {
  const int p = ::open(("/proc/" + std::to_string(worker) + "/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_NONBLOCK);
  if (p < 0) return -1;
  int unread = 0;
  const int rc = ::ioctl(p, FIONREAD, &unread);
  ::close(p);
  return rc == 0 ? unread : -1;
}

// Stops `worker` with a trial in flight, so that a signal dealt now costs that
// trial a retry; false if that did not come about within `timeout_s`. A worker
// struck between two trials is replaced unrecorded, so without this a
// "retried" test could pass without a retry. The steps, none left to timing:
// stop its supervisor (`parent`); wait until the worker is idle, its main
// thread reading its spec pipe (engine/worker_channel.h: fd 3), which is empty;
// stop the worker; let the supervisor go on until it has sent the next spec,
// unread in that pipe.
bool stop_with_a_trial_in_flight(pid_t parent, pid_t worker, double timeout_s) {
  const std::string syscall_file = "/proc/" + std::to_string(worker) + "/syscall";
  ::kill(parent, SIGSTOP);
  bool caught = wait_until([&] { return process_stopped(parent); }, timeout_s) &&
                wait_until(
                    [&] {  // "0 0x3 ...": read(2) on fd 3
                      return slurp(syscall_file).rfind("0 0x3 ", 0) == 0 && unread_in_pipe(worker, 3) == 0;
                    },
                    timeout_s);
  ::kill(worker, SIGSTOP);
  caught = caught && wait_until([&] { return process_stopped(worker); }, timeout_s);
  ::kill(parent, SIGCONT);
  return caught && wait_until([&] { return unread_in_pipe(worker, 3) > 0; }, timeout_s);
}

// `racelab run` of a workload that holds, with one worker dealt `sig` from
// outside while a trial is in flight: that trial is retried once, never a crash
// or a hang, and the run exits 0. The trial timeout (10 s) is what a stopped
// worker costs; shorter, a loaded CI machine's first trial (LibTorch start-up
// in the worker) could time out.
void fault_worker(int sig) {
  const std::string out = temp_dir();
  const std::string results = out + "/results.jsonl";
  const pid_t pid = spawn({"run", "direct_leak", "-m", "global_lock", "-s", "random", "-n", "40", "--timeout", "10",
                           "--results", results, "-q"},
                          out + "/log.txt");
  const pid_t worker = wait_for_worker(pid, 30);
  ASSERT_GT(worker, 0) << slurp(out + "/log.txt");
  // Let it get into its trials (LibTorch loads first), then strike.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (slurp(results).empty() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool caught = stop_with_a_trial_in_flight(pid, worker, 30);
  if (sig != SIGSTOP) {
    ::kill(worker, sig);
    ::kill(worker, SIGCONT);  // a caught signal (SIGSEGV) is seen once the worker runs
  }
  const int code = wait_exit(pid, 90);
  if (code == -1) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(caught) << "never caught the worker with a trial in flight";
  ASSERT_EQ(code, racelab::kExitOk) << slurp(out + "/log.txt");
  expect_files_whole(out);
  const auto lines = jsonl(results);
  EXPECT_EQ(lines.size(), 40u);
  int retried = 0;
  for (const auto& r : lines) {
    EXPECT_EQ(r["outcome"], "holds") << r.dump();
    if (r["metrics"].contains("retries")) {
      ++retried;
      EXPECT_EQ(r["metrics"]["retries"], 1) << r.dump();
      const std::string why = r["metrics"]["external_kills"][0].get<std::string>();
      EXPECT_NE(why.find(sig == SIGSTOP ? "stopped from outside" : "killed from outside"), std::string::npos) << why;
      EXPECT_NE(why.find(sigabbrev_np(sig)), std::string::npos) << why;
    }
  }
  EXPECT_EQ(retried, 1) << "the struck trial was not retried";
  fs::remove_all(out);
}

TEST(Faults, AWorkerKilledLikeTheOomKillerIsRetriedNotARace) { fault_worker(SIGKILL); }
TEST(Faults, AWorkerSentSigsegvFromOutsideIsRetriedNotARace) { fault_worker(SIGSEGV); }
TEST(Faults, AStoppedWorkerIsRetriedNotAHang) { fault_worker(SIGSTOP); }

// ---- a loaded machine ----------------------------------------------------------

// `n` processes that spin on a core each until this object goes (a CI machine
// busy with other jobs); each dies with the test process, too.
class BusyProcesses {
 public:
  explicit BusyProcesses(int n) {
    for (int i = 0; i < n; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        volatile unsigned long spins = 0;
        for (;;) spins = spins + 1;
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t p : pids_) ::kill(p, SIGKILL);
    for (pid_t p : pids_) ::waitpid(p, nullptr, 0);
  }
  size_t count() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

// A race-free catalogue workload beside three busy processes: the load makes
// every trial slower, and must never make one anything but `holds` (no hang
// from a watchdog, no let-go, no retry turned into a failure). Two strategies:
// random, and pct, whose change points land anywhere in a trial.
TEST(Faults, ARaceFreeCatalogueWorkloadBesideThreeBusyProcessesOnlyHolds) {
  const std::string out = temp_dir();
  BusyProcesses busy(3);
  ASSERT_EQ(busy.count(), 3u);
  for (const char* strategy : {"random", "pct:3"}) {
    const std::string results = out + "/results-" + std::string(strategy == std::string("random") ? "random" : "pct") +
                                ".jsonl";
    const int code = run_racelab({"run", "direct_leak", "-m", "global_lock", "-t", "4", "-s", strategy, "-n", "30",
                                  "--results", results, "-q"},
                                 out + "/log.txt", 55);
    SCOPED_TRACE(::testing::Message() << strategy << ": log:\n" << slurp(out + "/log.txt"));
    ASSERT_EQ(code, racelab::kExitOk);
    const auto lines = jsonl(results);
    EXPECT_EQ(lines.size(), 30u);
    for (const auto& r : lines) EXPECT_EQ(r["outcome"], "holds") << r.dump();
  }
  expect_files_whole(out);
  fs::remove_all(out);
}

// ---- a full disk, an unwritable output --------------------------------------
// What must hold here is that the run stops, names the path and leaves only
// whole files; which non-zero code it exits with is the exit-code contract's
// business (racelab/exit_code.h, tested with the commands in tests/cli).

// A tmpfs of `kib` KiB at a fresh mount point; empty when mounting is not
// allowed here (not root), and the test is skipped.
std::string mount_tiny_disk(int kib) {
  const std::string dir = temp_dir();
  const std::string opts = "size=" + std::to_string(kib) + "k";
  if (::mount("racelab-faults", dir.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
    fs::remove(dir);
    return "";
  }
  return dir;
}

void unmount(const std::string& dir) {
  ::umount2(dir.c_str(), MNT_DETACH);
  fs::remove_all(dir);
}

TEST(Faults, ACompareOnAFullDiskFailsNamingThePathAndLeavesNoDebris) {
  const std::string disk = mount_tiny_disk(48);
  if (disk.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): full-disk test skipped";
  const std::string log = temp_dir() + "/log.txt";
  const int code = run_racelab(compare_args(disk + "/report", 1), log);
  const std::string text = slurp(log);
  EXPECT_NE(code, racelab::kExitOk) << text;
  EXPECT_NE(text.find(disk), std::string::npos) << "the message names no path:\n" << text;
  expect_files_whole(disk);
  unmount(disk);
}

TEST(Faults, RunResultsOnAFullDiskKeepOnlyWholeLines) {
  const std::string disk = mount_tiny_disk(12);
  if (disk.empty()) GTEST_SKIP() << "cannot mount a tmpfs here (needs root): full-disk test skipped";
  const std::string log = temp_dir() + "/log.txt";
  const int code = run_racelab({"run", "direct_leak", "-m", "none", "-s", "random", "-n", "200", "--results",
                                disk + "/results.jsonl", "-q"},
                               log);
  const std::string text = slurp(log);
  EXPECT_NE(code, racelab::kExitOk) << text;
  EXPECT_NE(text.find(disk + "/results.jsonl"), std::string::npos) << text;
  EXPECT_FALSE(jsonl(disk + "/results.jsonl").empty()) << "the trials before the disk filled are kept";
  expect_files_whole(disk);
  unmount(disk);
}

TEST(Faults, AnUnwritableOutputFailsNamingThePath) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/file") << "a file where a folder should be\n";
  for (const auto& args : {compare_args(dir + "/file/report", 1),
                           std::vector<std::string>{"run", "direct_leak", "-n", "2", "--results",
                                                    dir + "/file/results.jsonl"}}) {
    const int code = run_racelab(args, dir + "/log.txt");
    const std::string text = slurp(dir + "/log.txt");
    EXPECT_NE(code, racelab::kExitOk) << text;
      EXPECT_NE(text.find(dir + "/file"), std::string::npos) << text;
  }
  fs::remove_all(dir);
}

}  // namespace
