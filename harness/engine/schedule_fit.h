// engine/schedule_fit.h -- does a schedule fit the program it is about to be
// replayed against? One check for every path that replays: `racelab replay`,
// `-s replay:FILE` (run, exec), `minimize`, reproduce's minimisation and the
// campaign's timelines.
//
// A schedule is the decisions about one program's threads. Replayed against
// another program it can only diverge, and a divergence counted as a trial
// outcome is a false result. So, before any trial:
//   - the schedule's workload is the one that will run (a catalogue workload
//     is part of racelab: its name is its identity);
//   - a workload whose program lives outside racelab (exec: a binary) records
//     that program's identity in its knobs (a ProgramIdentity, registered
//     beside the workload), and the program here must have the same one.
// A schedule that records no identity (written by hand, cut from another
// log) or another one is refused, unless the caller allows any program
// (`--any-program`); then the check returns the warning to print.
//
// A workload that runs a user's file registers its identity the same way,
// e.g. at namespace scope in the file that registers the workload:
//   const ProgramIdentityRegistrar kId{"exec", {"program_id", current, describe}};
#ifndef RACELAB_ENGINE_SCHEDULE_FIT_H_
#define RACELAB_ENGINE_SCHEDULE_FIT_H_

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/schedule.h"

namespace racelab {

struct ProgramIdentity {
  // The knob that records it, e.g. "program_id".
  std::string knob;
  // The identity of the program `knobs` name, as it is on this machine now;
  // throws (ExecError, std::invalid_argument) when that program is not here.
  std::function<std::string(const nlohmann::json& knobs)> current;
  // How messages name that program, e.g. "program /abs/path/prog".
  std::function<std::string(const nlohmann::json& knobs)> describe;
};

// Registers `workload`'s program identity; a static object's constructor.
struct ProgramIdentityRegistrar {
  ProgramIdentityRegistrar(const std::string& workload, ProgramIdentity identity);
};

// The identity registered for `workload`; nullptr for a catalogue workload.
const ProgramIdentity* program_identity(const std::string& workload);

// Checks that `s` (read from `source`: a path or "compact form") fits the
// replay about to run: workload `workload` with knobs `knobs` (for `racelab
// replay`, the schedule's own). Throws ScheduleError ("SOURCE: ...", what it
// was made for and what is here) when it does not; returns "" when it fits,
// or, with any_program, the warning to print when it was let through.
std::string check_schedule_fits(const Schedule& s, const std::string& source, const std::string& workload,
                                const nlohmann::json& knobs, bool any_program);

// After --any-program let `s` through: records the identity of the program its
// knobs name here, so its replays run (the program's own checks pass) and
// what they record is true. A no-op for a catalogue workload.
void adopt_program(Schedule* s);

}  // namespace racelab

#endif  // RACELAB_ENGINE_SCHEDULE_FIT_H_
