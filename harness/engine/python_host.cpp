#include "engine/python_host.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/exec_host.h"
#include "engine/schedule_fit.h"
#include "engine/self_exe.h"

namespace racelab {

namespace {

std::mutex g_mu;
std::string g_command;

// The worker's first Python: find the package, then hand over to it. Exit 3
// (bad input or environment) when the package is nowhere.
constexpr const char* kBootstrap = R"PY(
import os, sys
args = sys.argv[1:]
cut = args.index('--')
dirs, libs = args[:cut], args[cut + 1:]
for d in dirs:
    if os.path.isfile(os.path.join(d, 'racelab', 'worker.py')):
        sys.path.insert(0, d)
        break
else:
    try:  # pip install <prefix>/share/racelab/python, into this Python's environment
        import racelab.worker
    except ImportError:
        sys.stderr.write('racelab: the Python package racelab is in none of: ' + ', '.join(dirs) +
                         ', nor installed in this Python (pip install <prefix>/share/racelab/python)\n')
        sys.exit(3)
try:
    from racelab import worker
except Exception as e:  # a broken install: the worker cannot start (exit 3), in its own words
    sys.stderr.write('racelab: the Python package racelab cannot be imported by ' + sys.executable + ': ' +
                     type(e).__name__ + ': ' + str(e) + '\n')
    sys.exit(3)
sys.exit(worker.main(libs))
)PY";

#ifndef RACELAB_SOURCE_DIR
#define RACELAB_SOURCE_DIR ""
#endif
#ifndef RACELAB_HOST_LIB
#define RACELAB_HOST_LIB ""
#endif
#ifndef RACELAB_INSTALL_LIBDIR
#define RACELAB_INSTALL_LIBDIR "lib"
#endif

// `path` relative to the source tree, when it lies inside it.
std::string relative_to_source(const std::string& path) {
  std::string src = RACELAB_SOURCE_DIR;
  if (src.empty() || path.rfind(src + "/", 0) != 0) return "";
  return path.substr(src.size() + 1);
}

// A script's schedule names its script by script_id (engine/schedule_fit.h):
// "SIZE:FNV1A64" of the file as racelab reads it from where it runs, which
// racelab pyrun records (cli/cell_flags.h). A path only the Python can see (in
// another root) has no identity here, and recorded none when it was made.
const ProgramIdentityRegistrar kScriptIdentity{
    kPythonScriptWorkload,
    {"script_id",
     [](const nlohmann::json& knobs) -> std::string {
       const std::string script = knobs.is_object() ? knobs.value("script", std::string()) : std::string();
       return ::access(script.c_str(), R_OK) == 0 ? program_id(script) : std::string();
     },
     [](const nlohmann::json& knobs) {
       return "script " + (knobs.is_object() ? knobs.value("script", std::string("?")) : std::string("?"));
     }}};

}  // namespace

void set_python_command(const std::string& cmd) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_command = cmd;
}

std::string python_command() {
  std::lock_guard<std::mutex> lk(g_mu);
  if (!g_command.empty()) return g_command;
  const char* env = std::getenv("RACELAB_PYTHON");
  return env != nullptr ? env : "";
}

std::vector<std::string> python_worker_argv(const std::string& cmd) {
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec " + cmd + " \"$@\"", "racelab-python", "-c", kBootstrap};
  // The package: where the environment says, then racelab's own prefix (an
  // installed racelab: <prefix>/bin/racelab and <prefix>/share/racelab/python),
  // then the source tree it was built from; the bootstrap takes the first
  // that has it, else a package pip installed into the user's Python.
  if (const char* d = std::getenv("RACELAB_PYTHON_DIR")) argv.emplace_back(d);
  const std::string prefix = executable_dir() + "/..";
  argv.push_back(prefix + "/share/racelab/python");
  std::string src = RACELAB_SOURCE_DIR;
  if (!src.empty()) argv.push_back(src + "/python");
  argv.emplace_back("python");
  argv.emplace_back("--");
  if (const char* l = std::getenv("RACELAB_HOST_LIB")) argv.emplace_back(l);
  argv.push_back(prefix + "/" RACELAB_INSTALL_LIBDIR "/libracelab_host.so");
  argv.push_back(prefix + "/lib/libracelab_host.so");
  std::string lib = RACELAB_HOST_LIB;
  if (!lib.empty()) {
    argv.push_back(lib);
    std::string rel = relative_to_source(lib);
    if (!rel.empty()) argv.push_back(rel);
  }
  return argv;
}

std::string probe_torch_version(const std::string& cmd, std::string* why) {
  // A marker before the version: a root's or a venv's wrapper may print lines of its own.
  const std::string line = "exec " + cmd +
                           " -c 'import torch, sys; sys.stdout.write(\"racelab-torch-version \" + "
                           "torch.__version__ + \"\\n\")' 2>&1 </dev/null";
  std::FILE* p = ::popen(line.c_str(), "r");
  if (p == nullptr) {
    *why = fmt::format("cannot run '{}': popen failed", cmd);
    return "";
  }
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  const std::string marker = "racelab-torch-version ";
  const auto at = out.rfind(marker);
  if (status == 0 && at != std::string::npos) {
    std::string v = out.substr(at + marker.size());
    v = v.substr(0, v.find('\n'));
    if (!v.empty()) return v;
  }
  // The Python's last line says why (ModuleNotFoundError: No module named 'torch').
  std::string last;
  size_t end = out.find_last_not_of("\n");
  if (end != std::string::npos) {
    const size_t start = out.rfind('\n', end);
    last = out.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
  }
  *why = fmt::format("the Python '{}' cannot import torch ({})", cmd,
                     last.empty() ? fmt::format("exit status {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1) : last);
  return "";
}

PyrunTarget parse_pyrun_target(const std::string& arg) {
  const size_t at = arg.rfind("::");
  if (at == std::string::npos || at == 0) return {arg, ""};
  return {arg.substr(0, at), arg.substr(at + 2)};
}

Supervisor& supervisor_for(const Workload& w) {
  if (w.host.empty()) return default_supervisor();
  if (w.host != kPythonHost)
    throw std::invalid_argument(fmt::format("workload '{}': unknown host '{}'", w.name, w.host));
  std::string cmd = python_command();
  if (cmd.empty())
    throw std::invalid_argument(fmt::format(
        "workload '{}' runs on real PyTorch: give --python CMD (a command that starts a Python with torch, e.g. "
        "'bash ci/in-torch-root -- python3' or a venv's python) or set RACELAB_PYTHON",
        w.name));
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Supervisor>> by_command;
  std::lock_guard<std::mutex> lk(mu);
  auto& s = by_command[cmd];
  if (!s) {
    SupervisorOptions opt;
    opt.worker_argv = python_worker_argv(cmd);
    s = std::make_unique<Supervisor>(opt);
  }
  return *s;
}

}  // namespace racelab
