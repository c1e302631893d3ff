// The one translation from a compile-layer MicroResult (what a micro workload
// counted) to the harness's racelab::Observation (what the oracles judge).
// Every workload built on the compile layer's MicroResult returns through it,
// so a new count in MicroResult reaches the oracles everywhere at once.
#pragma once

#include "compile/micro_workloads.h"
#include "racelab/workload.h"

namespace racelab::scenarios {

inline racelab::Observation observe_micro(const racelab::compile::MicroResult& r) {
  racelab::Observation o;
  o.errors = r.errors;
  o.stuck_state = r.stuck_state;
  o.wrong_result = r.wrong_result;
  o.silent_fallbacks = r.silent_fallbacks;
  for (const auto& [name, value] : r.metrics) o.metrics[name] = value;
  return o;
}

}  // namespace racelab::scenarios
