// engine/worker.cpp -- the worker side of supervised trials (engine/supervisor.h):
// read a spec, run the trial, mirror every decision into the shared trace,
// write the result; repeat until the parent closes the spec pipe.
#include "engine/worker.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/child_process.h"
#include "engine/run_trial.h"
#include "engine/worker_channel.h"
#include "engine/zygote.h"
#include "racelab/exit_code.h"

namespace racelab {

namespace {

SharedTrace* g_trace = nullptr;

// Records how the fatal signal was sent (LastWords), then dies of it: the
// handler is reset to the default on entry (SA_RESETHAND), and raise() makes a
// sent signal fatal again; a fault re-faults on return anyway. Only
// async-signal-safe calls: atomic stores and raise().
void last_words(int sig, siginfo_t* info, void*) {
  if (g_trace != nullptr) {
    LastWords& w = g_trace->last_words;
    w.code.store(info != nullptr ? info->si_code : 0);
    w.sender.store(info != nullptr ? info->si_pid : 0);
    w.signo.store(sig);  // last: whoever sees it sees the rest
  }
  ::raise(sig);
}

// Every signal whose default action ends the process and that a handler can
// see. SIGKILL and SIGSTOP cannot be caught; SIGPIPE only means the parent is gone.
void install_last_words(SharedTrace* trace) {
  g_trace = trace;
  struct sigaction sa {};
  sa.sa_sigaction = last_words;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGTERM, SIGINT, SIGHUP, SIGQUIT,
                  SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF})
    ::sigaction(sig, &sa, nullptr);
}

}  // namespace

SharedTrace* open_worker_channel() {
  struct stat st;
  if (::fstat(kSpecFd, &st) != 0 || ::fstat(kResultFd, &st) != 0 || ::fstat(kTraceFd, &st) != 0) return nullptr;
  auto* trace =
      static_cast<SharedTrace*>(::mmap(nullptr, sizeof(SharedTrace), PROT_READ | PROT_WRITE, MAP_SHARED, kTraceFd, 0));
  if (trace == MAP_FAILED) return nullptr;
  // Dies with the supervisor: a worker has no one to report to once it is gone,
  // and must not run on as an orphan (a killed `racelab compare` leaves nothing behind).
  if (!die_with_parent(kSupervisorPidEnv)) ::_exit(0);
  install_last_words(trace);
  return trace;
}

std::function<void(const DecisionView&)> mirror_decisions(SharedTrace* trace) {
  return [trace](const DecisionView& d) { mirror_decision(trace, d); };
}

int worker_main() {
  SharedTrace* trace = open_worker_channel();
  if (trace == nullptr) {
    std::fprintf(stderr, "racelab __worker: internal command, started only by the supervisor\n");
    return kExitUsage;
  }
  // A zygote for the workers this worker's trials may start (engine/zygote.h),
  // forked now, before any trial ran autograd.
  Zygote::shared().prefork();
  ::setvbuf(stdout, nullptr, _IOLBF, 0);
  FILE* in = ::fdopen(kSpecFd, "r");
  char* buf = nullptr;
  size_t cap = 0;
  while (::getline(&buf, &cap, in) > 0) {
    TrialSpec spec;
    TrialResult r;
    try {
      spec = TrialSpec::from_json(nlohmann::json::parse(buf));
    } catch (const std::exception& e) {
      r.outcome = Outcome::kError;
      r.detail = std::string("worker: bad trial spec: ") + e.what();
    }
    trace->trial.store(spec.trial);
    trace->count.store(0);
    std::fprintf(stderr, "@@racelab-trial-begin %lld\n", static_cast<long long>(spec.trial));
    std::fflush(stderr);
    if (r.detail.empty()) {
      TrialHooks hooks;
      hooks.on_decision = mirror_decisions(trace);
      try {
        r = run_trial(spec, hooks);
      } catch (const std::exception& e) {
        r.outcome = Outcome::kError;
        r.detail = std::string("bad trial: ") + e.what();
        r.metrics["bad_input"] = true;
      }
    }
    if (r.metrics.is_object() && r.metrics.contains(kFreshWorkerAfter)) {
      const auto& v = r.metrics[kFreshWorkerAfter];
      if ((v.is_boolean() && v.get<bool>()) || (v.is_number() && v.get<double>() != 0)) r.process_tainted = true;
    }
    std::fflush(stdout);
    std::fprintf(stderr, "@@racelab-trial-end %lld\n", static_cast<long long>(spec.trial));
    std::fflush(stderr);
    // A workload's message may be any bytes: invalid UTF-8 is replaced, not thrown.
    // Decisions and events packed (TrialResult::to_wire_json): a step costs
    // a few integers, not an object, on both ends of the pipe.
    const std::string result =
        r.to_wire_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (!write_all(kResultFd, result)) return 0;  // the parent is gone
    if (r.process_tainted) {
      // A trial thread is stuck in the OS (static destructors could hang on
      // it), or the trial left the heap corrupted.
      std::fflush(nullptr);
      ::_exit(0);
    }
  }
  std::free(buf);
  return 0;
}

}  // namespace racelab
