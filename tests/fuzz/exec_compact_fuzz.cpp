// An exec `racelab1:` string pasted from a log (engine/schedule.h), then what
// `racelab replay` and `racelab exec -s replay:` do with it before any trial:
// the exec workload's knob check (its program, environment and regular
// expression, engine/exec_program.cpp) and whether it fits the program here
// (engine/schedule_fit.h). The input is the payload (the JSON array), encoded
// here, so mutations reach the fields rather than the base64 text. Each step
// refuses bad input only with its documented error.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/exec_host.h"
#include "engine/run_trial.h"
#include "engine/schedule.h"
#include "engine/schedule_fit.h"
#include "fuzz_input.h"
#include "racelab/workload.h"

namespace {

std::string b64url(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
    if (i + 2 < in.size()) v |= static_cast<unsigned char>(in[i + 2]);
    const size_t chars = std::min<size_t>(4, (in.size() - i) + 1);  // 1 byte -> 2 chars, 2 -> 3, 3 -> 4
    for (size_t c = 0; c < chars; ++c) out.push_back(k[(v >> (18 - 6 * c)) & 0x3F]);
  }
  return out;
}

// The knobs of `racelab exec -- /bin/true` here: the program a replay targets.
const nlohmann::json& target_knobs() {
  static const nlohmann::json knobs = [] {
    racelab::ExecProgram p;
    p.argv = {"/bin/true"};
    try {
      return racelab::exec_knobs(p);
    } catch (const racelab::ExecError&) {
      return nlohmann::json{{"argv", {"/bin/true"}}, {"program_id", ""}};
    }
  }();
  return knobs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  racelab::Schedule s;
  try {
    s = racelab::from_compact(racelab::kCompactPrefix + b64url(racelab::fuzz::text(data, size)));
  } catch (const racelab::ScheduleError&) {
    return 0;
  }
  if (s.workload == racelab::kExecWorkload) {
    try {
      (void)racelab::merge_knobs(racelab::require_workload(s.workload), s.knobs);
    } catch (const std::invalid_argument&) {
    }
  }
  for (bool any_program : {false, true}) {
    try {
      (void)racelab::check_schedule_fits(s, "compact form", racelab::kExecWorkload, target_knobs(), any_program);
    } catch (const racelab::ScheduleError&) {
    }
  }
  return 0;
}
