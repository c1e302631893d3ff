// engine/run_trial.h -- runs one trial in the calling process.
//
// The worker process calls this for every trial it is sent; tests and
// minimisation call it directly ("in-process trials") when the workload cannot
// crash or hang outside the scheduler's sight.
//
// Sequence: workload.reset(); attach the controller the spec asks for; run the
// body on a fresh thread as managed thread 0; the calling thread is the
// watchdog (no progress -- no step, point or event -- for spec.watchdog_s
// seconds means the running thread is blocked where the scheduler cannot see:
// `hang`); detach; classify.
//
// After a watchdog hang whose threads do not come back, the trial's threads are
// abandoned (still blocked in the OS) and the result says process_tainted: a
// worker then exits so the supervisor starts a fresh one.
#ifndef RACELAB_ENGINE_RUN_TRIAL_H_
#define RACELAB_ENGINE_RUN_TRIAL_H_

#include <functional>

#include <nlohmann/json.hpp>

#include "engine/trial.h"
#include "racelab/workload.h"

namespace racelab {

class Scheduler;
class FreeController;

struct TrialHooks {
  std::function<void(const DecisionView&)> on_decision;  // see Scheduler::Options
};

// Throws std::invalid_argument for an unknown workload, knob, mitigation or a
// bad strategy spec (the message names the field).
TrialResult run_trial(const TrialSpec& spec, const TrialHooks& hooks = {});

// The result of a trial whose body has ended with `obs`, read from the
// controller it ran under (either may be null: plain `os`): the decisions and
// counts, then the class -- the scheduler's abort (hang, divergence) if any,
// else the observation's; a watchdog that fired makes it `hang`. run_trial and
// the foreign-host bridge (harness/host/, racelab/host.h) share it, so a trial
// is classified the same way whoever ran its body.
TrialResult collect_result(Scheduler* sched, FreeController* free_ctl, const Observation& obs, bool watchdog_fired);

// A failing trial in which timed waits expired (metrics "timeouts_fired",
// which collect_result fills) says so in its detail: each wait, its thread
// and its logical timeout, and whether no other thread could run. A user then
// judges whether that starvation is plausible on a real machine. No-op for a
// trial that holds, or whose detail already says it.
void name_fired_timeouts(TrialResult* r);

// The workload's default knobs overlaid with `knobs`, checked by the
// workload's check_knobs; an unknown knob, a value of another JSON type or one
// the workload cannot run with throws KnobError (racelab/workload.h) naming it.
nlohmann::json merge_knobs(const Workload& workload, const nlohmann::json& knobs);
// The mitigation to use ("" -> the workload's first, or "none"); an unknown one
// is an error listing the accepted names.
std::string resolve_mitigation(const Workload& workload, const std::string& mitigation);
// find_workload, or an error listing the registered names.
const Workload& require_workload(const std::string& name);

}  // namespace racelab

#endif  // RACELAB_ENGINE_RUN_TRIAL_H_
