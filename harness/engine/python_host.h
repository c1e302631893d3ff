// engine/python_host.h -- trials whose worker is a Python process: real
// torch.compile, FX and flex_attention under the engine's strategies.
//
// A workload with host "python" (racelab/workload.h) is run by a worker that
// the supervisor starts from the user's Python command (`--python CMD`, or
// $RACELAB_PYTHON): any command that starts a Python with torch -- a venv's
// `python`, or `bash ci/in-torch-root -- python3`. The worker is the package
// python/racelab (worker.py) over the engine's C ABI (racelab/host.h,
// libracelab_host.so); it speaks the supervisor's protocol, so results,
// schedules, replay and minimisation are the same as for in-process workloads.
//
// The command runs as `/bin/sh -c 'exec CMD "$@"' ... -c BOOTSTRAP DIRS -- LIBS`:
// the shell splits CMD as a user would, and exec keeps the worker the
// supervisor's own child. DIRS and LIBS are where to find the package and the
// library, first as this build knows them, then relative to the working
// directory, which is what a root with the repository mounted at its working
// directory sees (ci/in-torch-root mounts it at /src and starts there).
// $RACELAB_PYTHON_DIR and $RACELAB_HOST_LIB, when set, are tried first.
#ifndef RACELAB_ENGINE_PYTHON_HOST_H_
#define RACELAB_ENGINE_PYTHON_HOST_H_

#include <string>
#include <vector>

#include "engine/supervisor.h"
#include "racelab/workload.h"

namespace racelab {

// The workload host name of Python workloads.
inline constexpr const char* kPythonHost = "python";
// `racelab pyrun`'s workload: a user's own script. Like exec's, its
// mitigation is the user's name for a variant (the script reads it from
// $RACELAB_MITIGATION), so any name is accepted.
inline constexpr const char* kPythonScriptWorkload = "python_script";

// pyrun's target: a script (`train.py`), or one function of it as the trial
// (`train.py::step_all`, pytest's node-id shape: the module is imported once
// per worker, natively, and each trial calls the function). The script's
// path and the function name ("" for a whole script); the two are knobs of
// python_script (script, function), so a schedule names both.
struct PyrunTarget {
  std::string script, function;
};
PyrunTarget parse_pyrun_target(const std::string& arg);

// `--python CMD`; an empty command falls back to $RACELAB_PYTHON.
void set_python_command(const std::string& cmd);
// The command in force ("" when neither the flag nor the variable gives one).
std::string python_command();
// The worker argv for `cmd` (see above).
std::vector<std::string> python_worker_argv(const std::string& cmd);

// What `cmd`'s Python says its torch is: runs `CMD -c PROGRAM` once (through
// /bin/sh, as the worker's command) and returns torch.__version__ ("2.14.1",
// "2.6.0+cpu"). Returns "" and sets *why (the command and the Python's last
// words: ModuleNotFoundError, "not found") when it cannot import torch.
std::string probe_torch_version(const std::string& cmd, std::string* why);

// The supervisor that runs `w`'s trials: default_supervisor() for in-process
// workloads; for Python ones, one per Python command, kept warm. Throws
// std::invalid_argument naming the workload when it needs --python and none is
// given.
Supervisor& supervisor_for(const Workload& w);

}  // namespace racelab

#endif  // RACELAB_ENGINE_PYTHON_HOST_H_
