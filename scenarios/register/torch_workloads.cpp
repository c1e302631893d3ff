// The real-torch workloads (python/racelab/workloads.py) as racelab::Workloads
// with host "python": racelab knows their names, knobs and mitigations -- for
// `list`, `validate`, schedules and knob checks -- without a Python, and runs
// them in a Python worker (engine/python_host.h). The one list of them is
// python/racelab/workloads.json, compiled in as a string (torch_workloads.json.h).
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/python_host.h"
#include "racelab/workload.h"
#include "torch_workloads.json.h"

namespace {

struct TorchWorkloads {
  TorchWorkloads() {
    const nlohmann::json spec = nlohmann::json::parse(kTorchWorkloadsJson);
    std::vector<std::string> mitigations;
    for (const auto& m : spec.at("mitigations")) mitigations.push_back(m.get<std::string>());
    for (const auto& w : spec.at("workloads")) {
      racelab::Workload wl;
      wl.name = w.at("name").get<std::string>();
      wl.description = w.at("description").get<std::string>();
      wl.default_knobs = w.at("knobs");
      wl.mitigations = mitigations;
      if (w.contains("mitigations")) wl.mitigations = w["mitigations"].get<std::vector<std::string>>();
      wl.host = racelab::kPythonHost;
      wl.check_knobs = [](const nlohmann::json& k) {
        if (k.contains("steps")) racelab::int_knob(k, "steps", 1, 1000);
        if (k.contains("shapes")) racelab::int_knob(k, "shapes", 1, 64);
        if (k.contains("dim")) racelab::int_knob(k, "dim", 1, 4096);
        if (k.contains("layers")) racelab::int_knob(k, "layers", 1, 64);
        if (k.contains("calls")) racelab::int_knob(k, "calls", 1, 1000000);
        if (k.contains("let_go_cpu_ms")) racelab::int_knob(k, "let_go_cpu_ms", 0, 600000);
        if (k.contains("expect_exit")) racelab::int_knob(k, "expect_exit", 0, 255);
        if (k.contains("hop") && (!k.at("hop").is_string() ||
                                  (k.at("hop") != "auto" && k.at("hop") != "flex_attention" && k.at("hop") != "cond")))
          throw racelab::KnobError("hop", k.at("hop").dump(), "auto | flex_attention | cond");
        if (k.contains("script") && k.at("script").get<std::string>().empty())
          throw racelab::KnobError("script", "\"\"", "the path of a Python script (racelab pyrun -- SCRIPT ARGS)");
        if (k.contains("points"))
          for (const auto& a : k.at("points"))
            if (!a.is_string() || a.get<std::string>().empty() || a.get<std::string>() == "lines:")
              throw racelab::KnobError("points", a.dump(),
                                       "REGEX (function entries, \"module.qualname\") or lines:REGEX (module names)");
        if (k.contains("args"))
          for (const auto& a : k.at("args"))
            if (!a.is_string()) throw racelab::KnobError("args", a.dump(), "strings, the script's arguments");
      };
      wl.run = [name = wl.name](const racelab::TrialInput&) -> racelab::Observation {
        throw std::logic_error("workload '" + name + "' runs in a Python worker (engine/python_host.h)");
      };
      racelab::register_workload(std::move(wl));
    }
  }
} registrar;

}  // namespace
