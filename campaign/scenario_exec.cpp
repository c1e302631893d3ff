// campaign/scenario_exec.cpp -- the "exec" section of a scenario
// (scenario_exec.h): its validation and the knobs of each cell.
#include "campaign/scenario_exec.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "engine/exec_host.h"
#include "engine/python_host.h"
#include "racelab/workload.h"

namespace racelab::campaign {

namespace {

using nlohmann::json;

const std::set<std::string> kExecKeys = {"command",   "commands",  "env",        "fail_on_output",
                                         "expect_exit", "let_go_ms", "fork_server"};
const std::set<std::string> kPyrunKeys = {"command",     "commands",      "fail_on_output",
                                          "expect_exit", "let_go_cpu_ms", "points"};

std::string show(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

void replace_all(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size()))
    s->replace(at, from.size(), to);
}

bool uses_threads(const json& command) {
  if (!command.is_array()) return false;
  return std::any_of(command.begin(), command.end(), [](const json& a) {
    return a.is_string() && a.get<std::string>().find("{threads}") != std::string::npos;
  });
}

// A command: a non-empty array of strings whose first names a program.
bool check_command(const json& v, const std::string& path, const AddProblem& add) {
  if (!v.is_array() || v.empty() ||
      !std::all_of(v.begin(), v.end(), [](const json& a) { return a.is_string(); })) {
    add(path, show(v), "a command: a non-empty array of strings, the program first (e.g. [\"./myprog\", \"--fast\"])");
    return false;
  }
  if (v[0].get<std::string>().empty()) {
    add(path + "[0]", "\"\"", "a program: a path relative to the scenario file, or a name on PATH");
    return false;
  }
  return true;
}

// Where mitigation m's command is, as a JSON path, and the command itself.
std::pair<std::string, const json*> command_of(const json& exec, const std::string& m,
                                               const std::string& section = "exec") {
  if (exec.contains("commands") && exec["commands"].is_object() && exec["commands"].contains(m))
    return {"$." + section + ".commands." + m, &exec["commands"][m]};
  if (exec.contains("command")) return {"$." + section + ".command", &exec["command"]};
  return {"", nullptr};
}

// A pyrun variant's knobs: the script relative to the working directory
// (lexically; it need not exist here), its arguments, the section's settings.
json pyrun_knobs_of(const json& pyrun, const json& command, const std::string& file, const std::string& mitigation,
                    int threads) {
  namespace fs = std::filesystem;
  std::vector<std::string> argv;
  for (const auto& a : command) {
    std::string s = a.get<std::string>();
    replace_all(&s, "{mitigation}", mitigation);
    replace_all(&s, "{threads}", std::to_string(threads));
    argv.push_back(s);
  }
  const PyrunTarget target = parse_pyrun_target(argv[0]);  // SCRIPT or SCRIPT::FUNCTION
  std::string script = target.script;
  if (script.front() != '/') {
    fs::path dir = fs::path(file).parent_path();
    if (dir.empty()) dir = ".";
    const fs::path abs = fs::absolute(dir / script).lexically_normal();
    script = abs.lexically_relative(fs::current_path()).string();
    if (script.empty()) script = abs.string();
  }
  json args = json::array();
  for (size_t i = 1; i < argv.size(); ++i) args.push_back(argv[i]);
  json knobs = {{"script", script}, {"args", args}, {"let_go_cpu_ms", pyrun.value("let_go_cpu_ms", 2000)}};
  if (!target.function.empty()) knobs["function"] = target.function;
  const std::string id = program_id(script);
  if (id.rfind("0:", 0) != 0) knobs["script_id"] = id;
  for (const char* k : {"fail_on_output", "expect_exit", "points"})
    if (pyrun.contains(k)) knobs[k] = pyrun[k];
  return knobs;
}

json knobs_of(const json& exec, const json& command, const std::string& file, const std::string& mitigation,
              int threads) {
  namespace fs = std::filesystem;
  json argv = json::array();
  for (const auto& a : command) {
    std::string s = a.get<std::string>();
    replace_all(&s, "{mitigation}", mitigation);
    replace_all(&s, "{threads}", std::to_string(threads));
    argv.push_back(s);
  }
  // With a slash: relative to the scenario file (a catalogue travels with its programs).
  std::string program = argv[0].get<std::string>();
  if (program.find('/') != std::string::npos && program.front() != '/') {
    fs::path dir = fs::path(file).parent_path();
    if (dir.empty()) dir = ".";
    argv[0] = fs::absolute(dir / program).lexically_normal().string();
  }
  json knobs = {{"argv", argv}};
  if (exec.contains("env")) {
    json env = json::object();
    for (auto it = exec["env"].begin(); it != exec["env"].end(); ++it) {
      std::string v = it.value().get<std::string>();
      replace_all(&v, "{mitigation}", mitigation);
      replace_all(&v, "{threads}", std::to_string(threads));
      env[it.key()] = v;
    }
    knobs["env"] = env;
  }
  for (const char* k : {"fail_on_output", "expect_exit", "let_go_ms", "fork_server"})
    if (exec.contains(k)) knobs[k] = exec[k];
  return knobs;
}

}  // namespace

void check_exec_section(const json& doc, const std::string& file, const std::vector<std::string>& mitigations,
                        const WorkloadInfo* info, const AddProblem& add) {
  const std::string workload = doc.contains("workload") && doc["workload"].is_string() ? doc["workload"].get<std::string>() : "";
  const bool is_exec = workload == kExecScenarioWorkload, is_pyrun = workload == kPyrunScenarioWorkload;
  if (!is_exec && doc.contains("exec"))
    add("$.exec", "an exec section", "an exec section only with \"workload\": \"exec\" (a program run by racelab exec)");
  if (!is_pyrun && doc.contains("pyrun"))
    add("$.pyrun", "a pyrun section", "a pyrun section only with \"workload\": \"pyrun\" (a script run by racelab pyrun)");
  if (!is_exec && !is_pyrun) return;
  const std::string sec = is_exec ? "exec" : "pyrun";
  const std::set<std::string>& keys = is_exec ? kExecKeys : kPyrunKeys;
  if (doc.contains("knobs"))
    add("$.knobs", show(doc["knobs"]),
        fmt::format("no knobs with workload {0}: the variants and how to judge them go in $.{0}", sec));
  if (!doc.contains(sec))
    return add("$." + sec, "nothing",
               is_exec ? "the programs to run: {\"commands\": {MITIGATION: [PROGRAM, ARGS...]}}"
                       : "the scripts to run: {\"commands\": {MITIGATION: [SCRIPT, ARGS...]}}");
  const json& exec = doc[sec];
  if (!exec.is_object())
    return add("$." + sec, show(exec), "an object {\"command\" or \"commands\", \"fail_on_output\", ...}");
  bool sound = true;  // structure and values; only then are the programs looked at
  for (auto it = exec.begin(); it != exec.end(); ++it)
    if (!keys.count(it.key())) {
      add("$." + sec + "." + it.key(), "unknown key \"" + it.key() + "\"", fmt::format("one of {}", fmt::join(keys, ", ")));
      sound = false;
    }
  if (exec.contains("command")) sound &= check_command(exec["command"], "$." + sec + ".command", add);
  if (exec.contains("commands")) {
    const json& cs = exec["commands"];
    if (!cs.is_object() || cs.empty()) {
      add("$." + sec + ".commands", show(cs), "an object: mitigation -> command");
      sound = false;
    } else {
      for (auto it = cs.begin(); it != cs.end(); ++it) {
        const std::string p = "$." + sec + ".commands." + it.key();
        if (std::find(mitigations.begin(), mitigations.end(), it.key()) == mitigations.end()) {
          add(p, "a command for \"" + it.key() + "\"", "a mitigation listed in $.mitigations");
          sound = false;
        } else {
          sound &= check_command(it.value(), p, add);
        }
      }
    }
  }
  for (const auto& m : mitigations)
    if (command_of(exec, m, sec).second == nullptr) {
      add("$." + sec + ".commands." + m, "nothing",
          fmt::format("a command for every listed mitigation (or one shared $.{}.command, e.g. with \"{{mitigation}}\")", sec));
      sound = false;
    }
  if (exec.contains("fail_on_output")) {
    const json& r = exec["fail_on_output"];
    if (!r.is_string()) {
      add("$." + sec + ".fail_on_output", show(r), "a regular expression (ECMAScript), as a string");
      sound = false;
    } else {
      try {
        (void)output_pattern(r.get<std::string>());
      } catch (const std::invalid_argument& e) {
        add("$." + sec + ".fail_on_output", show(r), e.what());
        sound = false;
      }
    }
  }
  auto int_in = [&](const char* key, int64_t lo, int64_t hi, const char* what) {
    if (!exec.contains(key)) return;
    const json& v = exec[key];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      add(fmt::format("$.{}.{}", sec, key), show(v), fmt::format("{}: an integer from {} to {}", what, lo, hi));
      sound = false;
    }
  };
  int_in("expect_exit", 0, 255, "the exit status of a passing run");
  int_in("let_go_ms", 0, 600000, "milliseconds without a scheduling point before a thread is let go");
  int_in("let_go_cpu_ms", 0, 600000, "milliseconds of a thread's CPU time without a point before it is let go");
  if (exec.contains("points")) {
    const json& v = exec["points"];
    if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const json& a) { return a.is_string(); })) {
      add("$.pyrun.points", show(v), "an array of strings: REGEX (function entries) or lines:REGEX (modules)");
      sound = false;
    }
  }
  if (exec.contains("env")) {
    const json& env = exec["env"];
    if (!env.is_object() || !std::all_of(env.begin(), env.end(), [](const json& v) { return v.is_string(); })) {
      add("$.exec.env", show(env), "an object NAME -> VALUE of strings (the program's environment)");
      sound = false;
    }
  }
  if (exec.contains("fork_server") && !exec["fork_server"].is_boolean()) {
    add("$.exec.fork_server", show(exec["fork_server"]), "true (fork the program stopped at main) or false");
    sound = false;
  }
  if (!sound) return;
  // A thread sweep needs a command that takes the thread count.
  bool any_threads = uses_threads(exec.value("command", json()));
  if (exec.contains("commands"))
    for (const auto& c : exec["commands"]) any_threads |= uses_threads(c);
  if (!any_threads && doc.contains("threads") && doc["threads"].is_array() && doc["threads"].size() > 1)
    add("$.threads", show(doc["threads"]),
        "one thread count: no command uses \"{threads}\", so each further count would run the same program again");
  if (!info || !info->check_knobs) return;
  // Every variant runs here: the engine's own check of its knobs.
  const int threads = doc.contains("threads") && doc["threads"].is_array() && !doc["threads"].empty() &&
                              doc["threads"][0].is_number_integer()
                          ? doc["threads"][0].get<int>()
                          : 1;
  std::set<std::string> checked;
  for (const auto& m : mitigations) {
    const auto [path, command] = command_of(exec, m, sec);
    if (is_pyrun) {
      // The script must be there, relative to the scenario file.
      namespace fs = std::filesystem;
      std::string script = (*command)[0].get<std::string>();
      replace_all(&script, "{mitigation}", m);
      fs::path dir = fs::path(file).parent_path();
      const fs::path at = script.front() == '/' ? fs::path(script) : (dir.empty() ? fs::path(".") : dir) / script;
      std::error_code ec;
      if (!fs::is_regular_file(at, ec)) {
        add(path, command->dump(), fmt::format("a script that exists ({}: no such file; relative to the scenario file)",
                                               at.lexically_normal().string()));
        continue;
      }
    }
    const json knobs = is_pyrun ? pyrun_knobs_of(exec, *command, file, m, threads) : knobs_of(exec, *command, file, m, threads);
    if (!checked.insert(knobs.dump()).second) continue;
    try {
      info->check_knobs(knobs);
    } catch (const KnobError& e) {
      add(e.knob() == "argv" || e.knob() == "script" ? path : "$." + sec + "." + e.knob(),
          e.knob() == "argv" || e.knob() == "script" ? command->dump() : e.found(),
          e.expected());
    } catch (const std::invalid_argument& e) {
      add(path, command->dump(), std::string(is_exec ? "a program racelab exec can run (" : "a script (") + e.what() + ")");
    }
  }
}

json exec_cell_knobs(const Scenario& s, const std::string& mitigation, int threads) {
  return knobs_of(s.exec, *command_of(s.exec, mitigation).second, s.file, mitigation, threads);
}

json pyrun_cell_knobs(const Scenario& s, const std::string& mitigation, int threads) {
  return pyrun_knobs_of(s.pyrun, *command_of(s.pyrun, mitigation, "pyrun").second, s.file, mitigation, threads);
}

std::string engine_workload(const std::string& scenario_workload) {
  return scenario_workload == kPyrunScenarioWorkload ? kPythonScriptWorkload : scenario_workload;
}

}  // namespace racelab::campaign
