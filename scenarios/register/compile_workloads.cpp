// The compile layer's micro workloads (compile/micro_workloads.h) as
// racelab::Workloads: direct_leak, stuck_true, transient_false, module_patch,
// recompile_after_warmup, user_trace_outside_lock, unsync_cache,
// jit_setting_restore and te_fuser_crash (free running only: it crashes).
//
// Knobs (every one listed in default_knobs): iterations, seq, dim, heads,
// grad, freeze, recompile_limit, setting, shared, roles, and the compile-layer
// variants flag_scope, flag_type, check, eager_sets_flag, cache, patch_scope.
// The engine's TrialInput.threads is the number of workers.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "racelab/workload.h"
#include "compile/jit_races.h"
#include "compile/micro_workloads.h"
#include "compile/oracles.h"
#include "micro_observation.h"

namespace {

using nlohmann::json;
using racelab::compile::MicroConfig;

json knobs_of(const MicroConfig& c) {
  json k = {{"threads", c.threads},
            {"iterations", c.iterations},
            {"seq", c.seq},
            {"dim", c.dim},
            {"heads", c.heads},
            {"grad", c.grad},
            {"freeze", c.freeze},
            {"recompile_limit", c.recompile_limit},
            {"setting", c.setting},
            {"shared", c.shared},
            {"roles", c.roles}};
  for (const auto& f : racelab::compile::Variants::fields()) k[f] = c.variants.get(f);
  return k;
}

template <class T>
T knob(const json& k, const char* name, const T& fallback, const std::string& workload) {
  if (!k.contains(name)) return fallback;
  try {
    return k.at(name).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument("workload '" + workload + "': knob '" + name + "' has the wrong type (got " +
                                k.at(name).dump() + ")");
  }
}

MicroConfig config_of(const std::string& workload, const racelab::TrialInput& in) {
  MicroConfig c = racelab::compile::micro_defaults(workload);
  const json& k = in.knobs;
  c.mitigation = in.mitigation.empty() ? "none" : in.mitigation;
  c.threads = in.threads > 0 ? in.threads : knob(k, "threads", c.threads, workload);
  c.seed = in.seed;
  c.iterations = knob(k, "iterations", c.iterations, workload);
  c.seq = knob(k, "seq", c.seq, workload);
  c.dim = knob(k, "dim", c.dim, workload);
  c.heads = knob(k, "heads", c.heads, workload);
  c.grad = knob(k, "grad", c.grad, workload);
  c.freeze = knob(k, "freeze", c.freeze, workload);
  c.recompile_limit = knob(k, "recompile_limit", c.recompile_limit, workload);
  c.setting = knob(k, "setting", c.setting, workload);
  c.shared = knob(k, "shared", c.shared, workload);
  c.roles = knob(k, "roles", c.roles, workload);
  for (const auto& f : racelab::compile::Variants::fields())
    if (k.contains(f)) c.variants.set(f, knob(k, f.c_str(), std::string(), workload));
  return c;
}

// The knob values a micro workload can run with (racelab::Workload::check_knobs):
// a bad one is a configuration error before any trial, never the trial's `error`.
void check_knobs(const std::string& workload, const json& k) {
  racelab::int_knob(k, "threads", 1, 64);
  racelab::int_knob(k, "iterations", 1, 100000);
  racelab::int_knob(k, "seq", 1, 1024);
  racelab::int_knob(k, "dim", 1, 1024);
  racelab::int_knob(k, "heads", 1, 64);
  racelab::int_knob(k, "recompile_limit", 0, 1000);
  try {
    (void)racelab::compile::parse_jit_setting(k.at("setting").get<std::string>());
  } catch (const std::invalid_argument&) {
    throw racelab::KnobError("setting", k.at("setting").dump(), "profiling_mode | texpr_fuser | executor_optimize");
  }
  const auto roles = racelab::compile::micro_workload_roles(workload);
  if (!k.at("roles").is_string() ||
      std::find(roles.begin(), roles.end(), k.at("roles").get<std::string>()) == roles.end())
    throw racelab::KnobError("roles", k.at("roles").dump(), fmt::format("{}", fmt::join(roles, " | ")));
  for (const auto& f : racelab::compile::Variants::fields()) {
    racelab::compile::Variants v;
    try {
      v.set(f, k.at(f).get<std::string>());
    } catch (const std::invalid_argument&) {
      throw racelab::KnobError(f, k.at(f).dump(), racelab::compile::Variants::accepted(f));
    }
  }
}


bool register_all() {
  for (const auto& name : racelab::compile::micro_workload_names()) {
    racelab::Workload w;
    w.name = name;
    w.description = racelab::compile::micro_workload_description(name);
    w.default_knobs = knobs_of(racelab::compile::micro_defaults(name));
    w.mitigations = racelab::compile::micro_workload_mitigations(name);
    w.needs_free_running = racelab::compile::micro_needs_free_running(name);
    w.reset = [] { racelab::compile::reset_for_trial(); };
    w.check_knobs = [name](const json& k) { check_knobs(name, k); };
    w.run = [name](const racelab::TrialInput& in) {
      return racelab::scenarios::observe_micro(racelab::compile::run_micro(config_of(name, in)));
    };
    racelab::register_workload(std::move(w));
  }
  return true;
}

const bool registered = register_all();

}  // namespace
