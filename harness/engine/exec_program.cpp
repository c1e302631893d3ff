// engine/exec_program.cpp -- the "exec" workload: its knobs, the checks on the
// program they name, and the supervisor per program (engine/exec_host.h).
#include <elf.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/exec_host.h"
#include "engine/exec_protocol.h"
#include "engine/python_host.h"
#include "engine/run_trial.h"
#include "engine/schedule_fit.h"
#include "engine/self_exe.h"
#include "racelab/workload.h"

#ifndef RACELAB_PRELOAD_BUILD_PATH
#define RACELAB_PRELOAD_BUILD_PATH ""
#endif
#ifndef RACELAB_PRELOAD_LIBDIR
#define RACELAB_PRELOAD_LIBDIR "lib"
#endif

namespace racelab {

using nlohmann::json;

namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The program's absolute path, found as execvp would (a name without a slash: $PATH).
std::string resolve(const std::string& name) {
  std::string found;
  if (name.find('/') != std::string::npos) {
    struct stat st {};
    if (::stat(name.c_str(), &st) != 0) throw ExecError(fmt::format("program {}: no such file", name));
    if (!is_executable_file(name)) throw ExecError(fmt::format("program {}: not an executable file", name));
    found = name;
  } else {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      std::string dir = dirs.substr(start, end - start);
      std::string cand = (dir.empty() ? "." : dir) + "/" + name;
      if (is_executable_file(cand)) {
        found = cand;
        break;
      }
      start = end + 1;
    }
    if (found.empty()) throw ExecError(fmt::format("program {}: not found (no such file here, and not on PATH)", name));
  }
  char buf[PATH_MAX];
  if (::realpath(found.c_str(), buf) == nullptr) throw ExecError(fmt::format("program {}: {}", name, std::strerror(errno)));
  return buf;
}

// The interpreter a script's "#!" line names, as a person would type it:
// "/bin/sh", "python3" for "#!/usr/bin/env python3" (env's options skipped),
// "" when `path` does not start with "#!".
std::string shebang_interpreter(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  char c;
  while (line.size() < 256 && in.get(c) && c != '\n') line += c;
  if (line.rfind("#!", 0) != 0) return "";
  std::vector<std::string> words;
  for (size_t i = 2; i < line.size();) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  if (words.empty()) return "";
  if (words[0] == "/usr/bin/env" || words[0] == "/bin/env") {
    for (size_t k = 1; k < words.size(); ++k)
      if (words[k][0] != '-' && words[k].find('=') == std::string::npos) return words[k];
  }
  return words[0];
}

// Whether `path` is an ELF executable with a program interpreter (dynamically
// linked): the preload library reaches nothing else.
void check_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char*>(&eh), sizeof(eh));
  if (!in || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    const std::string interpreter = shebang_interpreter(path);
    throw ExecError(fmt::format("program {}: not an ELF executable{}", path,
                                interpreter.empty()
                                    ? ""
                                    : fmt::format(" but a script: name the program it runs, racelab exec -- {} {} "
                                                  "(racelab controls the interpreter's threads)",
                                                  interpreter, path)));
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw ExecError(fmt::format("program {}: a 32-bit ELF file; racelab's preload library is 64-bit", path));
  bool dynamic = false;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + static_cast<uint64_t>(i) * eh.e_phentsize));
    in.read(reinterpret_cast<char*>(&ph), sizeof(ph));
    if (!in) break;
    dynamic = dynamic || ph.p_type == PT_INTERP;
  }
  if (!dynamic)
    throw ExecError(fmt::format(
        "program {}: statically linked (no program interpreter): racelab exec interposes the program's pthread "
        "calls through the dynamic linker (LD_PRELOAD), which a static program never runs; link it dynamically",
        path));
}

}  // namespace

// "SIZE:FNV1A64": cheap, and enough to tell one build of a program from another.
std::string program_id(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t h = 1469598103934665603ULL, size = 0;
  char buf[1 << 16];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    const auto n = static_cast<size_t>(in.gcount());
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(buf[i])) * 1099511628211ULL;
    size += n;
  }
  return fmt::format("{}:{:016x}", size, h);
}

namespace {

std::vector<std::string> argv_of(const json& knobs) {
  std::vector<std::string> out;
  const json& a = knobs.at("argv");
  if (!a.is_array() || a.empty()) throw KnobError("argv", a.dump(), "the program and its arguments, as strings");
  for (const auto& x : a) {
    if (!x.is_string()) throw KnobError("argv", a.dump(), "the program and its arguments, as strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

// NAME=VALUE words from the knob "env" ({NAME: VALUE}); KnobError when it is not that.
std::vector<std::string> env_of(const json& knobs) {
  std::vector<std::string> out;
  if (!knobs.contains("env")) return out;
  const json& e = knobs.at("env");
  static const std::regex name_re("[A-Za-z_][A-Za-z0-9_]*");
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (!it.value().is_string() || !std::regex_match(it.key(), name_re))
      throw KnobError("env", e.dump(), "an object NAME -> VALUE of strings, NAME a variable name");
    if (it.key() == kExecEnv || it.key() == kExecPreloadWasEnv)
      throw KnobError("env", e.dump(), fmt::format("no {}: racelab sets it to drive the program", it.key()));
    out.push_back(it.key() + "=" + it.value().get<std::string>());
  }
  return out;
}

// A --stdin file's absolute path, after checking that it is a file that can be read.
std::string stdin_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw ExecError(fmt::format("--stdin {}: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw ExecError(fmt::format("--stdin {}: a folder, not a file", path));
  if (::access(path.c_str(), R_OK) != 0) throw ExecError(fmt::format("--stdin {}: {}", path, std::strerror(errno)));
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) throw ExecError(fmt::format("--stdin {}: {}", path, std::strerror(errno)));
  return buf;
}

void check_knobs(const json& knobs) {
  std::vector<std::string> argv = argv_of(knobs);
  env_of(knobs);
  try {
    (void)output_pattern(knobs.at("fail_on_output").get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw KnobError("fail_on_output", knobs.at("fail_on_output").dump(), e.what());
  }
  int_knob(knobs, "expect_exit", 0, 255);
  int_knob(knobs, "let_go_ms", 0, 600000);
  int_knob(knobs, "max_steps", 1, kMaxExecSteps);
  int_knob(knobs, "clock_base_ns", 0, INT64_MAX);
  if (!knobs.at("real_time").is_boolean())
    throw KnobError("real_time", knobs.at("real_time").dump(), "true or false");
  if (!knobs.at("stdin").is_string())
    throw KnobError("stdin", knobs.at("stdin").dump(), "a readable file's path, or \"\" for /dev/null");
  if (const std::string in = knobs.at("stdin").get<std::string>(); !in.empty()) {
    try {
      (void)stdin_file(in);
    } catch (const ExecError& e) {
      throw KnobError("stdin", knobs.at("stdin").dump(), fmt::format("a readable file ({})", e.what()));
    }
  }
  try {
    check_exec_program(knobs);
  } catch (const ExecError& e) {
    throw KnobError("argv", knobs.at("argv").dump(), fmt::format("a program that runs here ({})", e.what()));
  }
}

const WorkloadRegistrar kExec{Workload{
    kExecWorkload,
    "an unmodified, dynamically linked program under the preload library (racelab exec -- PROGRAM ARGS)",
    json{{"argv", json::array()},
         {"program_id", ""},
         {"fork_server", true},
         {"fail_on_output", ""},
         {"expect_exit", 0},
         {"let_go_ms", 100},
         {"max_steps", ExecProgram{}.max_steps},
         {"real_time", false},
         {"clock_base_ns", 0},
         {"stdin", ""},
         {"env", json::object()}},
    {"none"},
    false,
    nullptr,
    [](const TrialInput&) -> Observation {
      throw std::invalid_argument("an exec trial runs in its own program, never in racelab's process (drop --in-process)");
    },
    check_knobs}};

// REALTIME now: where the logical clock of the trials to come starts.
int64_t real_time_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// An exec schedule names its program by program_id (engine/schedule_fit.h).
const ProgramIdentityRegistrar kExecIdentity{
    kExecWorkload,
    {"program_id", [](const json& knobs) { return program_id(resolve(argv_of(knobs).at(0))); },
     [](const json& knobs) { return "program " + resolve(argv_of(knobs).at(0)); }}};


}  // namespace

std::regex output_pattern(const std::string& pattern) {
  if (pattern.size() > kMaxOutputPatternChars)
    throw std::invalid_argument(fmt::format("a regular expression of at most {} characters (this one has {})",
                                            kMaxOutputPatternChars, pattern.size()));
  // Group depth and counted repetitions, outside character classes and escapes.
  int depth = 0, deepest = 0;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ')') {
      --depth;
    } else if (c == '{') {
      for (size_t j = i + 1; j < pattern.size() && (std::isdigit(static_cast<unsigned char>(pattern[j])) ||
                                                    pattern[j] == ',');
           ++j) {
        if (pattern[j] == ',') continue;
        size_t k = j;
        while (k < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[k]))) ++k;
        if (k - j > 4 || std::stol(pattern.substr(j, k - j)) > kMaxOutputPatternRepeat)
          throw std::invalid_argument(fmt::format(
              "a regular expression whose counted repetitions are at most {{{}}}", kMaxOutputPatternRepeat));
        j = k - 1;
      }
    }
  }
  if (deepest > kMaxOutputPatternDepth)
    throw std::invalid_argument(fmt::format("a regular expression with groups nested at most {} deep (this one: {})",
                                            kMaxOutputPatternDepth, deepest));
  try {
    return std::regex(pattern);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(fmt::format("a regular expression ({})", e.what()));
  }
}

bool output_matches(const std::regex& pattern, const std::string& line) {
  if (line.size() <= kMaxMatchedLineBytes) return std::regex_search(line, pattern);
  return std::regex_search(line.begin(), line.begin() + kMaxMatchedLineBytes, pattern);
}

json exec_knobs(const ExecProgram& p) {
  if (p.argv.empty()) throw ExecError("no program: racelab exec [options] -- PROGRAM ARGS...");
  std::vector<std::string> argv = p.argv;
  argv[0] = resolve(argv[0]);
  check_elf(argv[0]);
  json env = json::object();
  for (const std::string& e : p.env) {
    const auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0) throw ExecError(fmt::format("--env '{}': expected NAME=VALUE", e));
    env[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return json{{"argv", argv},
              {"env", env},
              {"program_id", program_id(argv[0])},
              {"fork_server", p.fork_server},
              {"fail_on_output", p.fail_on_output},
              {"expect_exit", p.expect_exit},
              {"let_go_ms", p.let_go_ms},
              {"max_steps", p.max_steps},
              {"real_time", p.real_time},
              {"stdin", p.stdin_path.empty() ? "" : stdin_file(p.stdin_path)},
              {"clock_base_ns", p.clock_base_ns > 0 ? p.clock_base_ns : real_time_now_ns()}};
}

json complete_exec_knobs(const json& knobs) {
  if (!knobs.value("program_id", "").empty()) {
    check_exec_program(knobs);
    return knobs;
  }
  ExecProgram p;
  p.argv = argv_of(knobs);
  p.fork_server = knobs.value("fork_server", p.fork_server);
  p.fail_on_output = knobs.value("fail_on_output", p.fail_on_output);
  p.expect_exit = knobs.value("expect_exit", p.expect_exit);
  p.let_go_ms = knobs.value("let_go_ms", p.let_go_ms);
  p.max_steps = knobs.value("max_steps", p.max_steps);
  p.real_time = knobs.value("real_time", p.real_time);
  p.clock_base_ns = knobs.value("clock_base_ns", p.clock_base_ns);
  p.stdin_path = knobs.value("stdin", p.stdin_path);
  p.env = env_of(knobs);
  return exec_knobs(p);
}

void check_exec_program(const json& knobs) {
  std::vector<std::string> argv = argv_of(knobs);
  const std::string path = resolve(argv[0]);
  check_elf(path);
  const std::string want = knobs.value("program_id", "");
  if (!want.empty()) {
    const std::string have = program_id(path);
    if (have != want)
      throw ExecError(fmt::format("program {}: not the program this was made for (recorded program_id {}, this file "
                                  "is {}): rebuild it as it was, or reproduce again with this build",
                                  path, want, have));
  }
}

std::string preload_library() {
  if (const char* env = std::getenv("RACELAB_PRELOAD")) {
    if (::access(env, R_OK) != 0) throw ExecError(fmt::format("RACELAB_PRELOAD={}: no such library", env));
    return env;
  }
  for (const std::string& cand :
       {executable_dir() + "/libracelab_preload.so", executable_dir() + "/../" RACELAB_PRELOAD_LIBDIR "/libracelab_preload.so",
        executable_dir() + "/../lib/libracelab_preload.so", std::string(RACELAB_PRELOAD_BUILD_PATH)})
    if (!cand.empty() && ::access(cand.c_str(), R_OK) == 0) return cand;
  throw ExecError("the preload library libracelab_preload.so is neither next to racelab nor in ../lib (set "
                  "RACELAB_PRELOAD to its path)");
}

Supervisor& supervisor_for(const TrialSpec& spec) {
  if (spec.workload != kExecWorkload) return supervisor_for(require_workload(spec.workload));
  static std::map<std::string, std::unique_ptr<Supervisor>> by_program;
  std::vector<std::string> argv = argv_of(spec.knobs);
  const bool fork_server = spec.knobs.value("fork_server", true);
  // One worker per program and environment: the fork server's image has both.
  std::string key = json(argv).dump() + spec.knobs.value("env", json::object()).dump() + (fork_server ? "|fork" : "|exec");
  auto& slot = by_program[key];
  if (!slot) {
    SupervisorOptions opt;
    opt.worker_argv = {"/proc/self/exe", "__exec-worker", fork_server ? "--fork-server" : "--exec-per-trial", "--"};
    opt.worker_argv.insert(opt.worker_argv.end(), argv.begin(), argv.end());
    opt.worker_name = "racelab: worker";
    slot = std::make_unique<Supervisor>(opt);
  }
  return *slot;
}

}  // namespace racelab
