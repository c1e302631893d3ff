// compile/trial_phases.cpp -- see trial_phases.h.
#include "compile/trial_phases.h"

#include <time.h>

#include <atomic>

namespace racelab::compile {
namespace {

std::atomic<int64_t> g_ns[static_cast<int>(Phase::kCount)];
thread_local PhaseScope* t_current = nullptr;

int64_t thread_cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::kInputs: return "inputs";
    case Phase::kTrace: return "trace";
    case Phase::kBuild: return "build";
    case Phase::kFirstRun: return "first_run";
    case Phase::kRun: return "run";
    case Phase::kOracle: return "oracle";
    case Phase::kCount: break;
  }
  return "?";
}

PhaseScope::PhaseScope(Phase p) : phase_(p), outer_(t_current), start_ns_(thread_cpu_ns()) {
  // The outer phase stops counting here; it resumes when this scope ends.
  if (outer_ != nullptr) g_ns[static_cast<int>(outer_->phase_)] += start_ns_ - outer_->start_ns_;
  t_current = this;
}

PhaseScope::~PhaseScope() {
  const int64_t now = thread_cpu_ns();
  g_ns[static_cast<int>(phase_)] += now - start_ns_;
  t_current = outer_;
  if (outer_ != nullptr) outer_->start_ns_ = now;
}

void reset_phases() {
  for (auto& n : g_ns) n = 0;
}

std::map<std::string, double> phase_cpu_ms() {
  std::map<std::string, double> m;
  for (int i = 0; i < static_cast<int>(Phase::kCount); ++i)
    m[phase_name(static_cast<Phase>(i))] = static_cast<double>(g_ns[i].load()) * 1e-6;
  return m;
}

}  // namespace racelab::compile
