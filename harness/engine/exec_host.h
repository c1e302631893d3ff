// engine/exec_host.h -- the exec host: trials of an unmodified, dynamically
// linked program (`racelab exec -- PROGRAM ARGS...`), on the same engine.
//
// One engine, several hosts: an exec trial is a TrialSpec like any other, of
// the workload "exec", whose knobs name the program. The supervisor runs it in
// a worker (`racelab __exec-worker`) that speaks the usual worker protocol
// (engine/supervisor.h) on one side, and drives the program on the other
// (engine/exec_protocol.h): the program runs with the preload library
// (harness/preload/), which turns its pthread calls into steps of the engine's
// Scheduler. So strategies, replay, minimisation and reports work unchanged.
//
// Knobs of "exec" (recorded in results and schedules):
//   argv            the program (an absolute path) and its arguments
//   program_id      "SIZE:FNV1A64" of the program file: a schedule made for
//                   another program is bad input, not a divergence
//   fork_server     true: fork a copy of the program stopped at main per
//                   trial; false: exec it per trial
//   fail_on_output  a regular expression (ECMAScript); a trial whose output
//                   matches is wrong_result ("" = none)
//   expect_exit     the exit status of a passing run (else: error)
//   let_go_ms       a running thread that uses this much of its own CPU time,
//                   or sleeps this long in the kernel, with no scheduling
//                   point is let go (an uncontrolled wait; 0 = never). Never
//                   the wall clock: a thread waiting for a core is not let go
//   real_time       true: the program reads the real clocks (not replayable
//                   where its control flow depends on them)
//   clock_base_ns   the logical clocks' start: REALTIME when the first trial
//                   was made (filled in when 0), kept so replays read the
//                   same times (harness/preload/time.cpp)
//   stdin           a file every trial reads as its standard input, from its
//                   start (an absolute path; "" = /dev/null)
//   env             {NAME: VALUE} added to the program's environment;
//                   LD_PRELOAD's libraries load after racelab's own (e.g. the
//                   op-level points of libracelab_op_points_preload.so)
//
// Outcomes: the program's exit status other than expect_exit -> error; death
// by a signal (abort() included) -> crash; every thread blocked -> hang, with
// who waits for which lock held by whom (the lock-order cycle first); a thread
// that spins or sleeps with no step and nobody else to run -> hang, naming it
// and where it is; a replay that cannot follow -> divergence.
#ifndef RACELAB_ENGINE_EXEC_HOST_H_
#define RACELAB_ENGINE_EXEC_HOST_H_

#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/supervisor.h"
#include "engine/trial.h"

namespace racelab {

inline constexpr const char* kExecWorkload = "exec";

// Bad input about the program (missing, not ELF, static, another program):
// the message names the program and what was expected. Exit 3.
class ExecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExecProgram {
  std::vector<std::string> argv;  // argv[0]: the program, as typed (PATH is searched)
  bool fork_server = true;
  std::string fail_on_output;
  int expect_exit = 0;
  int let_go_ms = 100;
  // Scheduling steps after which a trial ends as hang (livelock). A program
  // built with memory-access points makes a step of every shared access, so a
  // long loop needs more than the engine's default; a knob, so replays get it.
  int64_t max_steps = 200000;
  bool real_time = false;        // the real clocks instead of the logical ones
  int64_t clock_base_ns = 0;     // 0: now
  std::vector<std::string> env;  // NAME=VALUE
  std::string stdin_path;        // "": /dev/null
};

// The wall-clock backstop of an exec trial. Its watchdog judges by CPU time
// and by sleep (harness/preload/start.cpp), never the wall clock, so on a
// loaded machine a trial may take far longer than its --timeout in wall time
// and still end as the program would; only a trial process that cannot even
// report is killed, after this long.
inline double exec_backstop_s(double watchdog_s) { return 10 * watchdog_s + 30; }

// The largest max_steps an exec trial may ask for: a schedule holds every step's
// decision, and beyond this it would not fit (engine/schedule.cpp).
inline constexpr int64_t kMaxExecSteps = 10000000;

// --fail-on-output: libstdc++'s std::regex compiles and matches by recursion,
// so a pattern of thousands of nested groups, or a match along a very long
// output line, runs out of stack -- a crash instead of an answer. A pattern is
// therefore at most kMaxOutputPatternChars long, its groups nested at most
// kMaxOutputPatternDepth deep and its counted repetitions ({n}, {n,m}) at
// most kMaxOutputPatternRepeat; a line is matched on its first
// kMaxMatchedLineBytes bytes.
inline constexpr size_t kMaxOutputPatternChars = 1024;
inline constexpr int kMaxOutputPatternDepth = 32;
inline constexpr long kMaxOutputPatternRepeat = 1000;
inline constexpr size_t kMaxMatchedLineBytes = 4096;
// The pattern compiled (ECMAScript); throws std::invalid_argument saying what
// is wrong with one that does not compile or is beyond those bounds.
std::regex output_pattern(const std::string& pattern);
// Whether the first kMaxMatchedLineBytes bytes of `line` contain a match.
bool output_matches(const std::regex& pattern, const std::string& line);

// "SIZE:FNV1A64" of a file's bytes: a program's program_id, a script's
// script_id (racelab pyrun); "0:cbf29ce484222325" for a file that cannot be read.
std::string program_id(const std::string& path);

// The knobs of the "exec" workload for `program`, after checking it (throws ExecError).
nlohmann::json exec_knobs(const ExecProgram& program);
// Merged knobs of "exec" with the program resolved (an absolute path) and
// its program_id filled in when empty (a scenario names programs by relative
// path or PATH); a program_id given is checked. Throws ExecError.
nlohmann::json complete_exec_knobs(const nlohmann::json& knobs);
// Checks knobs read back (a schedule, a results file): the program is there,
// is a dynamically linked ELF executable and is the one they were made for.
void check_exec_program(const nlohmann::json& knobs);

// The supervisor that runs `spec`: one per program for exec trials (its
// worker keeps the fork server warm), supervisor_for(workload) for the rest
// (engine/python_host.h).
Supervisor& supervisor_for(const TrialSpec& spec);

// The preload library: $RACELAB_PRELOAD, next to this executable, or in the
// build tree; ExecError when none is found.
std::string preload_library();

// `racelab __exec-worker (--fork-server|--exec-per-trial) -- PROGRAM ARGS...`:
// the exec host's worker loop for `program`. Returns an exit code.
int exec_worker_main(const std::vector<std::string>& program, bool fork_server);

}  // namespace racelab

#endif  // RACELAB_ENGINE_EXEC_HOST_H_
