// reports/campaign/scenario_exec.cpp -- the "exec" section of a scenario
// (scenario_exec.h): its validation and the knobs of each cell.
#include "reports/campaign/scenario_exec.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "engine/exec_host.h"
#include "racelab/workload.h"

namespace racelab::reports {

namespace {

using nlohmann::json;

const std::set<std::string> kExecKeys = {"command",   "commands",  "env",        "fail_on_output",
                                         "expect_exit", "let_go_ms", "fork_server"};

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
std::pair<std::string, const json*> command_of(const json& exec, const std::string& m) {
  if (exec.contains("commands") && exec["commands"].is_object() && exec["commands"].contains(m))
    return {"$.exec.commands." + m, &exec["commands"][m]};
  if (exec.contains("command")) return {"$.exec.command", &exec["command"]};
  return {"", nullptr};
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
  const bool is_exec = doc.contains("workload") && doc["workload"] == kExecScenarioWorkload;
  if (!is_exec) {
    if (doc.contains("exec"))
      add("$.exec", "an exec section", "an exec section only with \"workload\": \"exec\" (a program run by racelab exec)");
    return;
  }
  if (doc.contains("knobs"))
    add("$.knobs", show(doc["knobs"]),
        "no knobs with workload exec: the program variants and how to judge them go in $.exec");
  if (!doc.contains("exec"))
    return add("$.exec", "nothing", "the programs to run: {\"commands\": {MITIGATION: [PROGRAM, ARGS...]}}");
  const json& exec = doc["exec"];
  if (!exec.is_object())
    return add("$.exec", show(exec), "an object {\"command\" or \"commands\", \"fail_on_output\", ...}");
  bool sound = true;  // structure and values; only then are the programs looked at
  for (auto it = exec.begin(); it != exec.end(); ++it)
    if (!kExecKeys.count(it.key())) {
      add("$.exec." + it.key(), "unknown key \"" + it.key() + "\"", fmt::format("one of {}", fmt::join(kExecKeys, ", ")));
      sound = false;
    }
  if (exec.contains("command")) sound &= check_command(exec["command"], "$.exec.command", add);
  if (exec.contains("commands")) {
    const json& cs = exec["commands"];
    if (!cs.is_object() || cs.empty()) {
      add("$.exec.commands", show(cs), "an object: mitigation -> command");
      sound = false;
    } else {
      for (auto it = cs.begin(); it != cs.end(); ++it) {
        const std::string p = "$.exec.commands." + it.key();
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
    if (command_of(exec, m).second == nullptr) {
      add("$.exec.commands." + m, "nothing",
          "a command for every listed mitigation (or one shared $.exec.command, e.g. with \"{mitigation}\")");
      sound = false;
    }
  if (exec.contains("fail_on_output")) {
    const json& r = exec["fail_on_output"];
    if (!r.is_string()) {
      add("$.exec.fail_on_output", show(r), "a regular expression (ECMAScript), as a string");
      sound = false;
    } else {
      try {
        (void)output_pattern(r.get<std::string>());
      } catch (const std::invalid_argument& e) {
        add("$.exec.fail_on_output", show(r), e.what());
        sound = false;
      }
    }
  }
  auto int_in = [&](const char* key, int64_t lo, int64_t hi, const char* what) {
    if (!exec.contains(key)) return;
    const json& v = exec[key];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      add(fmt::format("$.exec.{}", key), show(v), fmt::format("{}: an integer from {} to {}", what, lo, hi));
      sound = false;
    }
  };
  int_in("expect_exit", 0, 255, "the exit status of a passing run");
  int_in("let_go_ms", 0, 600000, "milliseconds without a scheduling point before a thread is let go");
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
    const auto [path, command] = command_of(exec, m);
    const json knobs = knobs_of(exec, *command, file, m, threads);
    if (!checked.insert(knobs.dump()).second) continue;
    try {
      info->check_knobs(knobs);
    } catch (const KnobError& e) {
      add(e.knob() == "argv" ? path : "$.exec." + e.knob(), e.knob() == "argv" ? command->dump() : e.found(),
          e.expected());
    } catch (const std::invalid_argument& e) {
      add(path, command->dump(), std::string("a program racelab exec can run (") + e.what() + ")");
    }
  }
}

json exec_cell_knobs(const Scenario& s, const std::string& mitigation, int threads) {
  return knobs_of(s.exec, *command_of(s.exec, mitigation).second, s.file, mitigation, threads);
}

}  // namespace racelab::reports
