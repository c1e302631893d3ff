#include "campaign/interrupt.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <utility>

#include "engine/outcome.h"

namespace racelab::campaign {
namespace {

std::atomic<int> g_interrupts{0};

void on_signal(int sig) {
  if (g_interrupts.fetch_add(1) >= 1 && sig == SIGINT) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

}  // namespace

void request_interrupt() { g_interrupts.fetch_add(1); }
bool interrupt_requested() { return g_interrupts.load() > 0; }
void clear_interrupt() { g_interrupts.store(0); }

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read/wait returns EINTR promptly
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &both, nullptr);  // one that is pending arrives now, at the handler
}

void count_trial(const TrialRecord& r, CellSummary* s) {
  ++s->trials;
  ++s->by_outcome[r.outcome];
  if (!is_failure(r.outcome)) return;
  ++s->failures;
  if (s->first_failure_trial < 0) {
    s->first_failure_trial = r.trial;
    s->first_failure_schedule = r.schedule_file;
  }
}

CellRun run_cell_until_interrupted(const CellRunner& runner, const CellSpec& spec, const TrialSink& sink) {
  CellRun out;
  CellSummary partial;  // rebuilt from the sink, for a cell stopped part-way
  const auto start = std::chrono::steady_clock::now();
  try {
    out.summary = runner(spec, [&](const TrialRecord& r) {
      sink(r);
      count_trial(r, &partial);
      if (interrupt_requested()) throw Interrupted{};
    });
  } catch (const Interrupted&) {
    out.interrupted = true;
    out.summary = std::move(partial);
    out.summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }
  // The runner may also return early because of the signal (a wait cut short).
  const CellSummary& s = out.summary;
  out.interrupted = interrupt_requested() && s.trials < spec.max_trials && !s.exhausted &&
                    !(spec.stop_at_first_failure && s.failures > 0);
  return out;
}

TrialRunner stop_on_interrupt(TrialRunner run) {
  return [run = std::move(run)](const TrialSpec& spec) {
    if (interrupt_requested()) throw Interrupted{};
    return run(spec);
  };
}

}  // namespace racelab::campaign
