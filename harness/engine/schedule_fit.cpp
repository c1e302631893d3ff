#include "engine/schedule_fit.h"

#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace racelab {

using nlohmann::json;

namespace {

std::map<std::string, ProgramIdentity>& identities() {
  static std::map<std::string, ProgramIdentity> m;  // built at static initialisation, read-only after
  return m;
}

}  // namespace

ProgramIdentityRegistrar::ProgramIdentityRegistrar(const std::string& workload, ProgramIdentity identity) {
  identities()[workload] = std::move(identity);
}

const ProgramIdentity* program_identity(const std::string& workload) {
  auto it = identities().find(workload);
  return it == identities().end() ? nullptr : &it->second;
}

std::string check_schedule_fits(const Schedule& s, const std::string& source, const std::string& workload,
                                const json& knobs, bool any_program) {
  if (s.workload != workload)
    throw ScheduleError(fmt::format("{}: a schedule of workload '{}', but this run is of '{}': a schedule replays "
                                    "only the workload it was made for",
                                    source, s.workload, workload));
  const ProgramIdentity* id = program_identity(workload);
  if (id == nullptr) return "";  // a catalogue workload: racelab itself is the program
  std::string here, what;
  try {
    what = id->describe(knobs);
    here = id->current(knobs);
  } catch (const std::exception& e) {
    throw ScheduleError(fmt::format("{}: {}", source, e.what()));
  }
  const json recorded_json = s.knobs.is_object() && s.knobs.contains(id->knob) ? s.knobs[id->knob] : json();
  const std::string recorded = recorded_json.is_string() ? recorded_json.get<std::string>() : "";
  if (recorded == here) return "";
  if (recorded.empty()) {
    if (!any_program)
      throw ScheduleError(fmt::format(
          "{}: records no program identity ({}), so racelab cannot tell that it was made for {} ({} {}); a replay "
          "against another program only diverges. Replay it anyway with --any-program",
          source, id->knob, what, id->knob, here));
    return fmt::format("{}: records no program identity ({}); replaying it against {} anyway (--any-program): a "
                       "divergence may mean another program, not another outcome",
                       source, id->knob, what);
  }
  if (!any_program)
    throw ScheduleError(fmt::format("{}: {}: not the program this was made for (recorded {} {}, this one is {}): "
                                    "rebuild it as it was, reproduce again with this build, or replay it anyway "
                                    "with --any-program",
                                    source, what, id->knob, recorded, here));
  return fmt::format("{}: made for another program (recorded {} {}, {} is {}); replaying it anyway "
                     "(--any-program): a divergence may mean another program, not another outcome",
                     source, id->knob, recorded, what, here);
}

void adopt_program(Schedule* s) {
  const ProgramIdentity* id = program_identity(s->workload);
  if (id == nullptr) return;
  try {
    s->knobs[id->knob] = id->current(s->knobs);
  } catch (const std::exception& e) {
    throw ScheduleError(e.what());
  }
}

}  // namespace racelab
