// preload/start.cpp -- where the shim takes over: the start of main.
//
// __libc_start_main is interposed so that main runs through racelab_main.
// Without kExecEnv (a program the program itself started, or the shim loaded
// by hand) main runs as if the shim were not there. With it, this process
// says hello to the exec worker and becomes a fork server, or runs one trial
// (engine/exec_protocol.h). A trial process builds the engine's Scheduler
// from the trial's spec, makes the main thread managed thread 0, starts the
// watchdog and calls main.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/exec_protocol.h"
#include "engine/strategy.h"
#include "engine/trial.h"
#include "engine/worker_channel.h"
#include "preload/control.h"
#include "preload/real.h"
#include "preload/thread_os.h"

extern char** environ;

namespace racelab::preload {

namespace {

using MainFn = int (*)(int, char**, char**);
MainFn g_main = nullptr;
SharedTrace* g_trace = nullptr;

struct WatchdogConfig {
  // A running thread that used this much CPU time, or slept this long in the
  // kernel, without reaching a scheduling step is let go (0: never).
  double let_go_s = 0.1;
  // No step at all: after this much CPU time of a spinning thread, or this
  // long with every thread that could move asleep, the trial is a hang.
  double limit_s = 10;
};
WatchdogConfig g_watch;

bool write_line(const std::string& s) { return write_all(kExecCtlOut, s + "\n"); }

// Lines from a pipe: the worker's trial specs (the fork server), or the one
// spec a spare trial process is handed. Each reader has its own buffer: a
// forked spare must not inherit the fork server's unread bytes.
struct LineReader {
  int fd;
  std::string buf;
  bool read(std::string* line);  // false at end of input
};

bool LineReader::read(std::string* line) {
  line->clear();
  for (;;) {
    size_t nl = buf.find('\n');
    if (nl != std::string::npos) {
      *line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      return true;
    }
    char chunk[65536];
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
  }
}

void sleep_s(double s) {
  timespec ts{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  real().nanosleep(&ts, nullptr);
}

// The watchdog: an unmanaged thread of the trial process. It looks at the
// running thread only while no scheduling step happens, and judges it by what
// the thread itself does (preload/thread_os.h), never by the wall clock, so
// a loaded machine changes no outcome:
//  - it spins (uses CPU time) with no step for let_go_s of its own CPU time,
//    or sleeps in the kernel (an uncontrolled wait: a futex, a pool's own
//    wait) for let_go_s: it is let go so the others can run;
//  - it cannot be let go (no other thread can run) and spins for limit_s of
//    CPU time, or sleeps for limit_s: the trial is a hang, and the message
//    says which thread, what it does and where.
// A thread that waits for a core uses no CPU time and is not asleep: it is
// never let go for that, however long the machine keeps it waiting.
// It starts once the trial is set up, not earlier in a spare trial process:
// in a program built with ThreadSanitizer, its creation is what shows TSan
// the set-up (the Scheduler it locks to let a thread go) happened before it;
// a watchdog started ahead and woken later reported a race in racelab's own
// code.
void* watchdog(void*) {
  enter_shim();  // for good: everything this thread does is the shim's own
  // No signal of the program's is delivered here: natively there is no such
  // thread, and a process-directed signal (a timer's, preload/signals.h) must
  // go to one of the program's threads, or wait for one that takes it.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  using Clock = std::chrono::steady_clock;
  const double poll = g_watch.let_go_s > 0 ? std::min(0.005, g_watch.let_go_s / 4) : 0.005;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  int64_t last = -1;
  int watched = -2;        // the thread the figures below are about (-1: none runs)
  int64_t cpu_from = 0;    // its CPU clock when it was last seen to step
  auto asleep_from = Clock::now();
  bool asleep = false;
  auto idle_from = Clock::now();  // no step since (for the messages only)
  for (;;) {
    sleep_s(poll);
    if (g_sched == nullptr) continue;
    const int64_t p = g_sched->progress();
    const int running = g_sched->current();
    const ThreadNow now = running >= 0 ? thread_now(running) : ThreadNow{};
    if (p != last || running != watched) {
      last = p;
      watched = running;
      cpu_from = now.cpu_ns;
      asleep = false;
      idle_from = Clock::now();
      continue;
    }
    const bool sleeping = now.known && !now.known_wait && (now.state == 'S' || now.state == 'D');
    if (sleeping && !asleep) asleep_from = Clock::now();
    asleep = sleeping;
    const double cpu_s = now.known ? static_cast<double>(now.cpu_ns - cpu_from) / 1e9 : 0.0;
    const double slept_s = asleep ? since(asleep_from) : 0.0;
    if (running >= 0 && g_watch.let_go_s > 0 && (cpu_s >= g_watch.let_go_s || slept_s >= g_watch.let_go_s)) {
      const std::string why =
          cpu_s >= g_watch.let_go_s
              ? fmt::format("ran for {:.0f} ms of CPU with no scheduling point (a spin loop?)", cpu_s * 1000)
              : fmt::format("slept in the kernel for {:g} ms with no scheduling point (an uncontrolled wait)",
                            g_watch.let_go_s * 1000);
      if (g_sched->let_go(running, why)) {
        last = -1;
        continue;
      }
    }
    std::string detail;
    if (running >= 0 && cpu_s >= g_watch.limit_s) {
      detail = fmt::format("thread {} ran for {:.0f} ms of CPU with no scheduling point (a spin loop?) and no other "
                           "thread can run; it {}",
                           running, cpu_s * 1000, where_is(running));
    } else if (running >= 0 && slept_s >= g_watch.limit_s) {
      detail = fmt::format("thread {} waits where racelab cannot see it (no scheduling point for {:g} s) and no "
                           "other thread can run; it {}",
                           running, g_watch.limit_s, where_is(running));
    } else if (running < 0 && since(idle_from) >= g_watch.limit_s) {
      // Every thread that could run was let go: they run freely and have not
      // called in again. Wait for them while one of them still uses the CPU.
      std::string free_threads;
      bool spinning = false;
      for (int t = 0; t < g_sched->threads_seen() && t <= kMaxThreadId; ++t) {
        if (!g_sched->is_free(t)) continue;
        const ThreadNow f = thread_now(t);
        spinning = spinning || (f.known && f.state == 'R' && since(idle_from) < 3 * g_watch.limit_s);
        free_threads += fmt::format("{}thread {} {}", free_threads.empty() ? "" : "; ", t, where_is(t));
      }
      if (spinning) continue;
      detail = fmt::format("no scheduling step for {:g} s: every thread that could run was let go after an "
                           "uncontrolled wait and none has come back ({})",
                           g_watch.limit_s, free_threads.empty() ? "none is alive" : free_threads);
    } else {
      continue;
    }
    detail = "watchdog: " + detail;
    std::string waits = describe_waits();
    if (!waits.empty()) detail += "; " + waits;
    if (write_report(true, "hang", detail, g_sched->steps())) ::_exit(0);
    return nullptr;
  }
}

// main returned or exit() was called: scheduling stops (exit's destructors run
// freely, the parked threads stay parked) and the trial reports.
void report_at_exit() {
  g_active.store(false);
  write_report(false, "holds", "", -1);
}

[[noreturn]] void bad_spec(const std::string& why) {
  write_report(true, "error", "racelab preload: bad trial spec: " + why, -1);
  ::_exit(0);
}

// A trial spec parsed and its strategy made. The fork server prepares each
// trial before it forks: a forked process faults in every code page it runs
// (fork copies no page-table entries of the program's and the libraries' text),
// and the JSON parser's were a tenth of a millisecond of every trial.
struct PreparedTrial {
  TrialSpec spec;
  double let_go_s = -1;                // the knob let_go_ms, in seconds (-1: not given)
  bool logical_clock = false;          // the knob real_time false: clocks read logical time
  bool real_time = false;              // the knob real_time: real clocks, sleeps and timers
  std::string stdin_path;              // the knob stdin: the file every trial reads as its stdin ("": as started)
  int64_t clock_base_ns = 0;           // the knob clock_base_ns: REALTIME at the trial's start
  std::unique_ptr<Strategy> strategy;  // null for the strategy "free"
  std::string error;                   // a bad spec: why
};

PreparedTrial prepare_trial(const std::string& line) {
  Inside in;
  PreparedTrial t;
  try {
    t.spec = TrialSpec::from_json(nlohmann::json::parse(line));
    const nlohmann::json& knobs = t.spec.knobs;
    if (knobs.is_object() && knobs.contains("let_go_ms") && knobs["let_go_ms"].is_number())
      t.let_go_s = knobs["let_go_ms"].get<double>() / 1000;
    // A schedule made before the logical clock (no base) replays on the real one, as it was made.
    if (knobs.is_object() && knobs.contains("clock_base_ns") && knobs["clock_base_ns"].is_number_integer() &&
        knobs["clock_base_ns"].get<int64_t>() > 0) {
      t.logical_clock = !knobs.value("real_time", false);
      t.clock_base_ns = knobs["clock_base_ns"].get<int64_t>();
    }
    if (knobs.is_object() && knobs.contains("real_time") && knobs["real_time"].is_boolean())
      t.real_time = knobs["real_time"].get<bool>();
    if (knobs.is_object() && knobs.contains("stdin") && knobs["stdin"].is_string())
      t.stdin_path = knobs["stdin"].get<std::string>();
    // The exec knob max_steps (racelab exec --max-steps) is the trial's step limit.
    if (knobs.is_object() && knobs.contains("max_steps") && knobs["max_steps"].is_number_integer())
      t.spec.max_steps = knobs["max_steps"].get<int64_t>();
    const std::string kind = t.spec.strategy.is_object() ? t.spec.strategy.value("kind", "") : "";
    if (kind != "free") t.strategy = make_strategy(t.spec.strategy, t.spec.seed);
  } catch (const std::exception& e) {
    t.error = e.what();
  }
  return t;
}

int run_trial(PreparedTrial& trial, int argc, char** argv) {
  Inside in;
  if (!trial.error.empty()) bad_spec(trial.error);
  const TrialSpec& spec = trial.spec;
  g_watch.limit_s = spec.watchdog_s;
  if (trial.let_go_s >= 0) g_watch.let_go_s = trial.let_go_s;
  // Only a controlled trial has steps for the clock to follow.
  set_logical_clock(trial.logical_clock && trial.strategy != nullptr, trial.clock_base_ns);
  set_real_time(trial.real_time);
  // Every trial reads its stdin from the start (a fork server's trials would
  // otherwise share one offset into it).
  if (!trial.stdin_path.empty()) {
    const int fd = ::open(trial.stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) bad_spec(fmt::format("stdin {}: {}", trial.stdin_path, std::strerror(errno)));
    if (::dup2(fd, 0) < 0) bad_spec(fmt::format("stdin {}: dup2: {}", trial.stdin_path, std::strerror(errno)));
    ::close(fd);
  }
  if (trial.strategy) {
    Strategy* strategy = trial.strategy.release();
    Scheduler::Options opt;
    opt.max_steps = spec.max_steps;
    // A program no one here wrote may loop doing work until another thread
    // tells it to stop; natively that thread gets a core within a time slice.
    opt.fair_steps = kExecFairSteps;
    opt.poll_aware = true;  // its yields and sleeps are polls (Scheduler::Options)
    opt.record_events = spec.record_events;
    opt.on_decision = [](const DecisionView& d) { mirror_decision(g_trace, d); };
    g_sched = new Scheduler(strategy, opt);  // never freed: threads park in it until the process ends
    g_sched->enter_main();
    tl.managed = true;
    tl.id = 0;
    note_thread_started(0);
  }
  prepare_thread_os();
  pthread_t dog;
  if (real().create(&dog, nullptr, watchdog, nullptr) != 0) bad_spec("cannot start the watchdog thread");
  std::atexit(report_at_exit);
  g_active.store(g_sched != nullptr);
  leave_shim();  // main is the program's, not the shim's
  int rc = g_main(argc, argv, environ);
  enter_shim();
  return rc;
}

// The environment as it was before the worker added the shim.
void restore_environment() {
  const char* was = std::getenv(kExecPreloadWasEnv);
  if (was != nullptr && *was != '\0')
    ::setenv("LD_PRELOAD", was, 1);
  else
    ::unsetenv("LD_PRELOAD");
  ::unsetenv(kExecPreloadWasEnv);
  ::unsetenv(kExecEnv);
}

template <class T>
T* map_shared(int fd, size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<T*>(p);
}

// What a trial process would otherwise make afresh, made once in the fork
// server and inherited by every fork: the C library's cache of thread stacks
// (a new thread's mmap and guard-page mprotect) and its malloc arenas (a
// thread's first malloc maps and trims 128 MiB). Threads that are alive
// together each take an arena of their own; when they end, their stacks go to
// the cache (up to 40 MiB) and their arenas to the free list. The program has
// not started, so nothing of its own is touched.
void warm_thread_caches() {
  constexpr unsigned kThreads = 4;  // the watchdog and three of the program's
  static std::atomic<unsigned> attached{0};
  static std::atomic<bool> release{false};
  auto body = [](void*) -> void* {
    tl.depth = 1;
    void* volatile block = std::malloc(64);  // attaches this thread to an arena of its own
    std::free(block);
    attached.fetch_add(1);
    while (!release.load()) real().sched_yield();  // alive until all are attached
    return nullptr;
  };
  pthread_t t[kThreads];
  unsigned started = 0;
  for (; started < kThreads; ++started)
    if (real().create(&t[started], nullptr, body, nullptr) != 0) break;
  while (attached.load() < started) real().sched_yield();
  release.store(true);
  for (unsigned i = 0; i < started; ++i) real().join(t[i], nullptr);
}

// The fork server's next trial process, forked one trial ahead: while a
// trial runs on one core, the next process is forked and rehearses on the
// other, so a trial starts when its spec arrives, not a fork
// and a few hundred page faults later. (A forked process faults in every page
// it touches: the program's and the libraries' text anew, and a private copy
// of every page it writes.) The rehearsal parses the previous trial's spec
// and makes its strategy, and throws both away: the parser's and the
// strategy's pages are then in place for the real spec.
struct Spare {
  pid_t pid = -1;  // -1: the fork failed (errno says why)
  int spec = -1;   // the fork server's end: the spare's one spec line
};

int spare_main(int spec_fd, const std::string& rehearsal, int argc, char** argv) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::close(kExecCtlIn);
  ::close(kExecCtlOut);
  if (!rehearsal.empty()) prepare_trial(rehearsal);
  LineReader server{spec_fd, {}};
  std::string line;
  if (!server.read(&line)) ::_exit(0);  // the fork server ended
  ::close(spec_fd);
  PreparedTrial trial = prepare_trial(line);
  return run_trial(trial, argc, argv);
}

// Returns only in the fork server; the spare runs its trial and exits as main
// returning would.
Spare fork_spare(const std::string& rehearsal, int argc, char** argv) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return Spare{};
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(p[0]);
    ::close(p[1]);
    errno = e;
    return Spare{};
  }
  if (pid == 0) {
    ::close(p[1]);
    std::exit(spare_main(p[0], rehearsal, argc, argv));
  }
  ::close(p[0]);
  return Spare{pid, p[1]};
}

int racelab_main(int argc, char** argv, char** envp) {
  const char* mode_env = std::getenv(kExecEnv);
  if (mode_env == nullptr) return g_main(argc, argv, envp);
  const std::string mode = mode_env;
  restore_environment();
  g_trace = map_shared<SharedTrace>(kExecTraceFd, sizeof(SharedTrace));
  g_report = map_shared<ExecReport>(kExecReportFd, sizeof(ExecReport));
  ::close(kExecTraceFd);
  ::close(kExecReportFd);
  if (g_trace == nullptr || g_report == nullptr) {
    std::fprintf(stderr, "racelab preload: started without the exec worker's shared pages\n");
    return 70;
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the worker's end is ours
  if (!write_line(fmt::format("hello {}", ::getpid()))) ::_exit(0);
  LineReader worker{kExecCtlIn, {}};
  std::string line;
  if (mode == "single") {
    if (!worker.read(&line)) ::_exit(0);
    ::close(kExecCtlIn);
    ::close(kExecCtlOut);
    PreparedTrial trial = prepare_trial(line);
    return run_trial(trial, argc, argv);
  }
  // The fork server: this image, stopped at main, is forked once per trial,
  // one trial ahead (see Spare).
  warm_thread_caches();
  prepare_thread_os();  // inherited by every trial process
  std::string rehearsal;  // the last spec handed on
  Spare spare = fork_spare(rehearsal, argc, argv);
  while (worker.read(&line)) {
    if (spare.pid < 0) {  // the last fork failed: try again now
      spare = fork_spare(rehearsal, argc, argv);
      if (spare.pid < 0) {
        write_line(fmt::format("error fork: {}", std::strerror(errno)));
        continue;
      }
    }
    const pid_t pid = spare.pid;
    const bool handed = write_all(spare.spec, line + "\n");
    ::close(spare.spec);
    if (handed) g_report->pid.store(pid, std::memory_order_release);
    rehearsal = line;
    spare = fork_spare(rehearsal, argc, argv);  // while the trial runs
    if (!handed) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!handed) {
      write_line("error the spare trial process ended before its trial");
      continue;
    }
    if (!write_line(fmt::format("status {}", status))) break;
  }
  ::_exit(0);
}

}  // namespace

}  // namespace racelab::preload

extern "C" __attribute__((visibility("default"))) int __libc_start_main(int (*main)(int, char**, char**), int argc,
                                                                        char** argv, void (*init)(), void (*fini)(),
                                                                        void (*rtld_fini)(), void* stack_end) {
  racelab::preload::g_main = main;
  return racelab::preload::real().libc_start_main(racelab::preload::racelab_main, argc, argv, init, fini, rtld_fini,
                                                  stack_end);
}
